package journal

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// The discard index names the outcome entry of each discarded message,
// per vhost and queue, and catches up with entries written after a lookup.
func TestDiscardedNamesTheOutcomeEntry(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	add := func(step string, ids ...string) uint64 {
		t.Helper()
		e, err := j.Append(Entry{Action: triage.ActionDiscard, Vhost: "v", Queue: "q", MessageIDs: ids, Reason: "r", Details: map[string]any{"step": step}})
		if err != nil {
			t.Fatal(err)
		}
		return e.Seq
	}
	add("decision", "a", "b", "c")
	first := add("outcome", "a", "b")
	got, err := j.Discarded("v", "q", []string{"a", "b", "c"})
	if err != nil || len(got) != 2 || got["a"] != first || got["b"] != first {
		t.Fatalf("discarded %v, %v; want a and b in entry %d", got, err, first)
	}
	second := add("outcome", "b")
	if got, _ := j.Discarded("v", "q", []string{"a", "b"}); got["a"] != first || got["b"] != second {
		t.Errorf("after a second discard: %v, want a=%d b=%d", got, first, second)
	}
	if got, _ := j.Discarded("v", "other", []string{"a"}); len(got) != 0 {
		t.Errorf("another queue's discard: %v", got)
	}
	if err := j.Verify(); err != nil {
		t.Errorf("the index must not touch the chain: %v", err)
	}
}
