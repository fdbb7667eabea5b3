package journal

import (
	"path/filepath"
	"strings"
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

// A discard whose outcome never came (dlqt killed during its acks) leaves
// its selection open: the ids it named are reported with the entry that
// named them, a group's through its selected ids, until an outcome
// discards them; another queue's outcome changes nothing.
func TestDiscardsInterruptedNameTheSelectionWithoutOutcome(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	add := func(queue, step string, ids ...string) uint64 {
		t.Helper()
		e, err := j.Append(Entry{Action: triage.ActionDiscard, Vhost: "v", Queue: queue, MessageIDs: ids, Reason: "r", Details: map[string]any{"step": step}})
		if err != nil {
			t.Fatal(err)
		}
		return e.Seq
	}
	add("q", "decision", "a", "b")
	add("q", "outcome", "a", "b")
	add("q", "decision") // a --where decision: no ids
	selected := add("q", "selected", "c", "d", "e")
	add("other", "decision", "c")
	add("other", "outcome", "c") // another queue's outcome closes nothing here
	got, err := j.DiscardsInterrupted("v", "q", []string{"a", "b", "c", "d", "e", "f"})
	if err != nil || len(got) != 3 || got["c"] != selected || got["e"] != selected {
		t.Fatalf("interrupted %v, %v; want c, d, e from entry %d", got, err, selected)
	}
	if got, _ := j.DiscardsInterrupted("v", "other", []string{"c"}); len(got) != 0 {
		t.Errorf("the other queue's discard finished: %v", got)
	}
	add("q", "decision", "f")
	add("q", "outcome", "f") // closes its own selection only
	if got, _ := j.DiscardsInterrupted("v", "q", []string{"c", "d", "e", "f"}); len(got) != 3 || got["d"] != selected {
		t.Errorf("after the next discard: %v, want c, d, e still from entry %d", got, selected)
	}
	add("q", "decision", "d")
	add("q", "outcome", "d") // discards d for good
	if got, _ := j.DiscardsInterrupted("v", "q", []string{"c", "d", "e"}); len(got) != 2 || got["d"] != 0 {
		t.Errorf("after d was discarded: %v, want c and e", got)
	}
	if err := j.Verify(); err != nil {
		t.Errorf("the index must not touch the chain: %v", err)
	}
}

// A retry takes its reason and ids from a discard's outcome entry, and
// from nothing else: a decision, another queue's outcome or an entry that
// does not exist is refused by name.
func TestDiscardOutcomeIsOnlyADiscardsOutcomeOfThatQueue(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var seqs []uint64
	for _, step := range []string{"decision", "outcome"} {
		e, err := j.Append(Entry{Action: triage.ActionDiscard, Vhost: "v", Queue: "q", MessageIDs: []string{"a"}, Reason: "stale", Details: map[string]any{"step": step}})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	if e, err := j.DiscardOutcome(seqs[1], "v", "q"); err != nil || e.Reason != "stale" || len(e.MessageIDs) != 1 {
		t.Errorf("the outcome: %+v, %v", e, err)
	}
	for _, c := range []struct {
		seq          uint64
		queue, error string
	}{
		{seqs[0], "q", "not the outcome of a discard"},
		{seqs[1], "other", "not from this queue"},
		{99, "q", "has no entry 99"},
	} {
		if _, err := j.DiscardOutcome(c.seq, "v", c.queue); err == nil || !strings.Contains(err.Error(), c.error) {
			t.Errorf("entry %d of %s: %v, want %q", c.seq, c.queue, err, c.error)
		}
	}
}
