package filter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

type memBodies map[int]triage.Message

func (b memBodies) Message(pos int) (triage.Message, error) {
	if m, ok := b[pos]; ok {
		return m, nil
	}
	return triage.Message{}, errors.New("gone")
}

// indexed is n messages as a spilled read keeps them: index entries whose
// payload and headers are only in bodies.
func indexed(n int) []triage.Triaged {
	bodies := memBodies{}
	var ms []triage.Message
	for i := range n {
		m := triage.Message{Queue: "q", Position: i, Properties: triage.Properties{MessageID: fmt.Sprintf("m-%d", i), ContentType: "application/json"},
			Headers: triage.Headers{"tenant": fmt.Sprintf("h-%d", i%3)},
			Body:    []byte(fmt.Sprintf(`{"event_type":"e","note":"needle-%d"}`, i%10))}
		bodies[i] = m
		ms = append(ms, m)
	}
	top := triage.Topology{Queues: []triage.Queue{{Name: "q"}}}
	s := triage.NewSpilled(bodies, nil)
	s.UseTopology(top)
	var out []triage.Triaged
	for _, t := range triage.Analyze(triage.Batch{Queue: "q", Messages: ms}, top, nil) {
		out = append(out, s.Index(t))
	}
	return out
}

func TestTextAndTenantReadIndexEntriesBack(t *testing.T) {
	ts := indexed(30)
	if ts[0].Message.Body != nil || ts[0].Payload != "" {
		t.Fatal("not index entries")
	}
	for expr, want := range map[string]int{"text~needle-3": 3, "tenant=h-1": 10, "text~needle-3 tenant=h-0": 1, "reason=published": 30} {
		f, err := ParseLine(expr, Options{Cache: NewSearchCache(0)})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(f.Apply(ts)); got != want {
			t.Errorf("%s: %d matched, want %d", expr, got, want)
		}
		if f.ReadsMessages() != (expr != "reason=published") {
			t.Errorf("%s: ReadsMessages %v", expr, f.ReadsMessages())
		}
		r, err := f.Resolve(context.Background(), triage.Slice(ts))
		if err != nil || !r.Resolved() {
			t.Fatal(err)
		}
		if got := len(r.Apply(ts)); got != want { // by index: the slice resolved
			t.Errorf("%s resolved: %d matched, want %d", expr, got, want)
		}
		if got := len(r.Apply(slices.Clone(ts))); got != want { // by id: another slice
			t.Errorf("%s resolved, by id: %d matched, want %d", expr, got, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, _ := ParseLine("text~needle", Options{})
	if _, err := f.Resolve(ctx, triage.Slice(ts)); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled resolve: %v", err)
	}
}
