package trail

import (
	"runtime"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// chainOf is n records of one writer, chained, as its journal would seal
// them (sealed here: a journal's fsync per append would make the setup
// the benchmark).
func chainOf(writer string, n int) []Record {
	rs := make([]Record, n)
	prev := ""
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range rs {
		e := journal.Entry{Seq: uint64(i + 1), Time: t0.Add(time.Duration(i) * time.Second), Actor: "alice", Host: "bastion-a",
			Action: triage.ActionTag, Vhost: "/", Queue: "orders.dlq", MessageIDs: []string{"m"}, Reason: "dup", PrevHash: prev}
		e.Hash = journal.HashOf(e)
		prev = e.Hash
		rs[i] = Record{Writer: writer, Entry: e, Offset: int64(i)}
	}
	return rs
}

// BenchmarkVerifier checks a trail of 100,000 records one at a time, as
// dlqt journal verify --stream reads it, and reports what the check keeps
// a record once the record itself is gone (the records are not kept:
// a trail of a million costs a million times this, not a million records).
func BenchmarkVerifier(b *testing.B) {
	const n = 100_000
	rs := chainOf("alice@bastion-a:/j", n)
	if !journal.CheckHash(rs[n-1].Entry) {
		b.Fatal("the benchmark's chain does not verify")
	}
	var kept uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var v Verifier
		for _, r := range rs {
			v.Add(r)
		}
		chains, problems := v.Result()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(problems) != 0 || chains[0].Last != n {
			b.Fatalf("problems %v, chain to %d", problems, chains[0].Last)
		}
		kept = (after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)) / n
		runtime.KeepAlive(&v)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	b.ReportMetric(float64(kept), "B-kept/record")
}
