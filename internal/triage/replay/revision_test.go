package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestRevisionReplacesTheBodyAndSaysSo(t *testing.T) {
	m := triage.Message{Body: []byte(`{"a":1}`), Properties: triage.Properties{MessageID: "m1"}, Headers: triage.Headers{"tenant": "acme"}}
	var none *Revision
	if got := none.apply(m); string(got.Body) != `{"a":1}` || len(got.Headers) != 1 {
		t.Errorf("no revision changed the copy: %+v", got)
	}
	rev := &Revision{ID: "rev-1", Body: []byte(`{"a":2}`), SHA256: sha256Hex(`{"a":2}`), OriginalSHA256: "abc"}
	got := rev.apply(m)
	if string(got.Body) != `{"a":2}` || got.Properties.MessageID != "m1" || got.Headers[HeaderRevision] != "rev-1" ||
		got.Headers[HeaderOriginalSHA256] != "abc" || got.Headers["tenant"] != "acme" {
		t.Errorf("copy %+v", got)
	}
	p := Plan{Items: ItemsOf(Item{ID: "m1"}, Item{ID: "m2"})}
	p.UseRevisions(map[string]Revision{"m1": *rev})
	if p.Items.At(0).Revision == nil || p.Items.At(0).Revision.ID != "rev-1" || p.Items.At(1).Revision != nil {
		t.Errorf("items %+v", p.Items)
	}
}

// TestAChangedBodyIsLeftUntouched: an item names the body a decision was
// made on (an approved proposal's, a revision's original); the fake port
// holds {} under every id, so only a names the body held, and b and c
// are put back, never published nor acked, and said why; so is d, whose
// revision came without its body.
func TestAChangedBodyIsLeftUntouched(t *testing.T) {
	port := newFakePort()
	plan := fakePlan(Options{Rate: 10, Canary: 1, CanaryRate: 1, Observe: time.Second, AutoRamp: true}, "a", "b", "c", "d")
	edit(&plan.Items, 0, func(it *Item) { it.BodySHA256 = sha256Hex(`{}`) })
	edit(&plan.Items, 1, func(it *Item) { it.BodySHA256 = sha256Hex(`{"amount":10}`) })
	edit(&plan.Items, 2, func(it *Item) {
		it.Revision = &Revision{ID: "rev-1", Body: []byte(`{"amount":999}`), SHA256: sha256Hex(`{"amount":999}`), OriginalSHA256: sha256Hex(`{"amount":10}`)}
	})
	// as a journaled plan reads back: its body is kept apart, not at hand
	edit(&plan.Items, 3, func(it *Item) {
		it.Revision = &Revision{ID: "rev-2", SHA256: sha256Hex(`{"amount":1}`), OriginalSHA256: sha256Hex(`{}`)}
	})
	r := drive(t, plan, port, nil, nil)
	if r.err != nil {
		t.Fatal(r.err)
	}
	published, acked, requeued := port.snapshot()
	if !slices.Equal(published, []string{"a"}) || !slices.Equal(acked, []string{"a"}) || !slices.Equal(requeued, []string{"b", "c", "d"}) {
		t.Errorf("published %v acked %v requeued %v, want only a replayed and b, c put back", published, acked, requeued)
	}
	if o := outcomes(r.res, "a", "b", "c", "d"); !slices.Equal(o, []Outcome{OutcomeResolved, OutcomeUntouched, OutcomeUntouched, OutcomeUntouched}) || !slices.Equal(r.res.Changed, []string{"b", "c", "d"}) {
		t.Errorf("outcomes %v, changed %v", o, r.res.Changed)
	}
	if !strings.Contains(r.res.Why["b"], "changed since the proposal named it") || !strings.Contains(r.res.Why["c"], "revision rev-1 was made from a body") ||
		!strings.Contains(r.res.Why["d"], "revision rev-2: its edited body is not at hand") {
		t.Errorf("why %v", r.res.Why)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
