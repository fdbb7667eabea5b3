package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// An x-death time past year 9999 (a broken or hostile publisher) is a
// valid AMQP timestamp that encoding/json cannot write and RFC 3339 cannot
// read back: browse marks it, so `messages --json` and snapshots work.
func TestATimePastYear9999IsMarkedNotFatal(t *testing.T) {
	f := newFixture(t, "y10k")
	f.declare("parked", nil)
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 400)
	p := testMessage(0, []byte(`{}`))
	p.Headers["x-death"] = []any{amqp.Table{"count": int64(1), "reason": "rejected", "queue": "work", "time": far, "exchange": "", "routing-keys": []any{"work"}}}
	p.Headers["x-failed-at"] = far
	f.publishOne("", "parked", p)

	l := f.live()
	b, err := l.Browse(context.Background(), "parked", triage.BrowseOptions{})
	if err != nil || len(b.Messages) != 1 {
		t.Fatalf("browse: %d, %v", len(b.Messages), err)
	}
	if _, err := json.Marshal(b.Messages); err != nil {
		t.Errorf("messages as JSON: %v", err)
	}
	if v, _ := b.Messages[0].Headers["x-failed-at"].(string); !strings.Contains(v, "out of range") {
		t.Errorf("x-failed-at = %#v, want it marked out of range", b.Messages[0].Headers["x-failed-at"])
	}
	if d := triage.ParseDeaths(b.Messages[0].Headers); len(d) != 1 || !d[0].Time.IsZero() {
		t.Errorf("deaths %+v, want one with no time", d)
	}
	s, err := broker.Capture(context.Background(), l, []string{"parked"}, triage.BrowseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := broker.WriteSnapshot(&buf, s); err != nil {
		t.Fatal(err)
	}
	if _, err := broker.ReadSnapshot(&buf); err != nil {
		t.Errorf("the snapshot cannot be read back: %v", err)
	}
	// A snapshot an older dlqt wrote with such a time still opens.
	old := `{"format":"` + broker.SnapshotFormat + `","batches":[{"queue":"p","messages":[{"queue":"p","headers":{"t":{"time":"+10000-01-01T00:00:00Z"}}}]}]}`
	if _, err := broker.ReadSnapshot(strings.NewReader(old)); err != nil {
		t.Errorf("older snapshot: %v", err)
	}
}
