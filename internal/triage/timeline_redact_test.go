package triage

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
)

// What an application writes into its retry and fault headers is free text
// and carries what the failing code had in hand: the timeline is shown to a
// viewer and printed by messages --json, so it is redacted like the headers
// it is built from, and the values masked are counted.
func TestTimelineIsRedacted(t *testing.T) {
	secrets := []string{"Hunter2-db-pass", redacttest.VisaRaw, redacttest.Stripe, "5500 0000 0000", "Zm9vYmFy"}
	m := Message{Queue: "orders.dlq.q", Body: []byte(`{"failure":{"reason_code":"DB_LOGIN","consumer":"billing password=Zm9vYmFy","attempt":2}}`),
		Headers: Headers{
			"x-retry-count":    int64(3),
			"x-last-error":     "db login failed password=Hunter2-db-pass card " + redacttest.VisaRaw,
			"x-error":          "Authorization: Bearer " + redacttest.Stripe,
			"MT-Fault-Message": "Card 5500 0000 0000 0004 declined by issuer",
		}}
	got := Analyze(Batch{Queue: m.Queue, Messages: []Message{m}}, Topology{}, redact.New())[0]
	shown := dumpTimeline(got.Timeline)
	for _, s := range secrets {
		if strings.Contains(shown, s) {
			t.Errorf("%q readable in the timeline:\n%s", s, shown)
		}
	}
	// password, card, bearer token, card, password in the consumer (twice: first and last failure)
	if got.TimelineRedactions < 5 {
		t.Errorf("%d timeline redactions counted, want at least 5:\n%s", got.TimelineRedactions, shown)
	}
	if !strings.Contains(shown, "db login failed") || !strings.Contains(shown, "declined by issuer") {
		t.Errorf("the text around the secrets is gone:\n%s", shown)
	}
}

// A detail is clipped for the screen after it is redacted: clipped first, a
// card number cut at the edge no longer passes Luhn and its first digits
// would be shown.
func TestTimelineRedactsBeforeClipping(t *testing.T) {
	lead := strings.Repeat("x", maxDetail-len("application retry: ")-8)
	m := Message{Headers: Headers{"x-last-error": lead + " card " + redacttest.VisaRaw + " declined"}}
	ev, n := BuildTimeline(m, Envelope{}, nil, redact.New())
	if len(ev) != 1 || n != 1 {
		t.Fatalf("%d events, %d redactions: %s", len(ev), n, dumpTimeline(ev))
	}
	if strings.Contains(ev[0].Detail, "4111") {
		t.Errorf("the start of the card is readable: %q", ev[0].Detail)
	}
}
