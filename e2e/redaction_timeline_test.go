package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// Issue 22, item 2: `dlqt messages --json` showed the attempt timeline's
// details whole (x-last-error, x-error, a MassTransit fault message) while
// the same headers two fields down were masked; and an AWS secret access
// key alone under an innocuous key was shown.
func TestMessagesJSONRedactsTheTimeline(t *testing.T) {
	const awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	snap := secretSnapshot(t, `{"data":"`+awsSecret+`","failure":{"consumer":"billing password=Hunter2-consumer"}}`, triage.Headers{
		"x-retry-count":    int64(2),
		"x-last-error":     "db login failed password=Hunter2-db-pass card 4111111111111111",
		"x-error":          "Authorization: Bearer sk_live_abcdefghijklmnop1234",
		"MT-Fault-Message": "Card 5500 0000 0000 0004 declined",
		"x-debug":          awsSecret,
	})
	m := oneMessage(t, isolatedEnv(t), "--snapshot", snap, "messages", "park", "--json")
	row, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Hunter2-db-pass", "Hunter2-consumer", "4111111111111111", "sk_live_abcdefghijklmnop1234", "5500 0000 0000", awsSecret} {
		if strings.Contains(string(row), s) {
			t.Errorf("%q is in the output:\n%s", s, row)
		}
	}
	if len(m.Timeline) < 4 || !strings.Contains(string(row), "db login failed") {
		t.Errorf("the timeline lost its events or their text:\n%s", row)
	}
	// payload: the AWS secret and the consumer's password; headers: five;
	// timeline: two in x-last-error, the bearer token, the card, the
	// consumer's password in the failure event
	if m.Redactions < 11 {
		t.Errorf("%d redactions counted, want at least 11:\n%s", m.Redactions, row)
	}
}
