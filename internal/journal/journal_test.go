package journal

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

func open(t *testing.T) *Journal {
	t.Helper()
	j, err := Open(filepath.Join(t.TempDir(), "journal.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func TestAppendChainsEntries(t *testing.T) {
	j := open(t)
	first, err := j.Append(Entry{Actor: "ana@bastion", Action: triage.ActionTag, Vhost: "/", Queue: "orders.dlq.q",
		MessageIDs: []string{"msg-1"}, Reason: "needs-fix", Details: map[string]any{"n": 3, "why": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := j.Append(Entry{Actor: "ana@bastion", Action: "note", Reason: "looked"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Seq != 1 || second.Seq != 2 {
		t.Fatalf("seq = %d, %d; want 1, 2", first.Seq, second.Seq)
	}
	if first.PrevHash != "" || second.PrevHash != first.Hash || len(first.Hash) != 64 {
		t.Fatalf("chain not linked: %+v %+v", first, second)
	}
	if err := j.Verify(); err != nil {
		t.Fatalf("fresh chain does not verify: %v", err)
	}
	es, err := j.Entries()
	if err != nil || len(es) != 2 || es[0].Hash != first.Hash || es[1].Hash != second.Hash {
		t.Fatalf("entries read back differ: %v %+v", err, es)
	}
}

func TestVerifyNamesTheFirstBrokenEntry(t *testing.T) {
	j := open(t)
	for i := range 4 {
		if _, err := j.Append(Entry{Actor: "a", Action: "note", Reason: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	good, _ := j.Entries()
	tests := []struct {
		name    string
		tamper  func([]Entry) []Entry
		wantSeq uint64
	}{
		{"changed reason", func(es []Entry) []Entry { es[2].Reason = "forged"; return es }, 3},
		{"changed actor of first", func(es []Entry) []Entry { es[0].Actor = "mallory"; return es }, 1},
		{"changed time", func(es []Entry) []Entry { es[1].Time = es[1].Time.Add(time.Second); return es }, 2},
		{"removed entry", func(es []Entry) []Entry { return slices.Delete(es, 1, 2) }, 3},
		{"rehashed without relinking", func(es []Entry) []Entry {
			es[1].Reason = "forged"
			es[1].Hash, _ = hashOf(es[1])
			return es
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := tt.tamper(slices.Clone(good))
			var ce *ChainError
			if err := VerifyChain(es); !errors.As(err, &ce) || ce.Seq != tt.wantSeq {
				t.Fatalf("VerifyChain = %v, want a break at entry %d", err, tt.wantSeq)
			}
		})
	}
}

func TestTagsFollowTagAndUntag(t *testing.T) {
	j := open(t)
	tag := func(action triage.Action, tag string, ids ...string) {
		t.Helper()
		if _, err := j.Append(Entry{Actor: "a", Action: action, Vhost: "v", Queue: "q", MessageIDs: ids, Reason: tag}); err != nil {
			t.Fatal(err)
		}
	}
	tag(triage.ActionTag, "poison", "m1", "m2")
	tag(triage.ActionTag, "needs-fix", "m1")
	tag(triage.ActionTag, "poison", "m1") // twice is once
	tag(triage.ActionUntag, "poison", "m2")
	got, err := j.Tags("v", "q", []string{"m1", "m2", "m3"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got["m1"], []string{"needs-fix", "poison"}) {
		t.Errorf("m1 tags = %v", got["m1"])
	}
	if _, ok := got["m2"]; ok {
		t.Errorf("m2 should have no tags, got %v", got["m2"])
	}
	other, _ := j.Tags("v", "other-queue", []string{"m1"})
	if len(other) != 0 {
		t.Errorf("tags leak across queues: %v", other)
	}
	if _, err := j.Append(Entry{Action: triage.ActionTag, MessageIDs: []string{"m1"}}); err == nil {
		t.Error("a tag entry without a tag was accepted")
	}
}

func TestSecondOpenFailsWithLockedNotHang(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	// bbolt's flock is per file description, so a second Open in the same
	// process contends like a second dlqt would.
	_, err = Open(path, 200*time.Millisecond)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open = %v, want ErrLocked", err)
	}
}

func TestEntriesSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(Entry{Action: triage.ActionTag, MessageIDs: []string{"m"}, Reason: "x", Details: map[string]any{"big": 1 << 40}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j, err = Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Verify(); err != nil {
		t.Fatalf("reopened journal does not verify: %v", err)
	}
	e, err := j.Append(Entry{Action: "note"})
	if err != nil || e.Seq != 2 {
		t.Fatalf("append after reopen: seq %d, %v", e.Seq, err)
	}
}
