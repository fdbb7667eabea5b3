package journal

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// BenchmarkAppend is one durable, chained entry per op: what a tag or a
// replay outcome costs.
func BenchmarkAppend(b *testing.B) {
	j, err := Open(filepath.Join(b.TempDir(), "journal.db"), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	e := Entry{Actor: "ana@bastion", Action: triage.ActionTag, Vhost: "/", Queue: "orders.dlq.q", MessageIDs: []string{"msg-1"}, Reason: "poison"}
	for b.Loop() {
		if _, err := j.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify10k recomputes a chain of 10,000 entries.
func BenchmarkVerify10k(b *testing.B) {
	es := make([]Entry, 10000)
	prev := ""
	for i := range es {
		e := Entry{Seq: uint64(i + 1), Time: time.Unix(1_790_000_000+int64(i), 0).UTC(), Actor: "a", Action: "note", MessageIDs: []string{}, PrevHash: prev}
		e.Hash, _ = hashOf(e)
		es[i], prev = e, e.Hash
	}
	for b.Loop() {
		if err := VerifyChain(es); err != nil {
			b.Fatal(err)
		}
	}
}
