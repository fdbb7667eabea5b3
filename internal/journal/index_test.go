package journal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// scanOnly hides the index: replay.Interrupted and Find then read every
// entry, the answer the index must give.
type scanOnly struct{ j *Journal }

func (s scanOnly) Records() ([]triage.Recorded, error) { return s.j.Records() }
func (s scanOnly) Path() string                        { return s.j.Path() }

// mixedEntries is n entries of a busy journal: replays planned, started,
// resumed and finished (some never), their outcomes, tags and discards
// over a few queues, in a seeded random order.
func mixedEntries(n int, seed uint64) []Entry { return journalOf(n, seed, 10, 3) }

// journalOf is mixedEntries with one replay in replayEvery entries, and
// one replay in killedEvery left open.
func journalOf(n int, seed uint64, replayEvery, killedEvery int) []Entry {
	rng := rand.New(rand.NewPCG(seed, 1))
	queues := []string{"orders.dlq", "billing.parking", "legacy.failed"}
	var out []Entry
	replays := 0
	for len(out) < n {
		q := queues[rng.IntN(len(queues))]
		switch rng.IntN(replayEvery) {
		case 0:
			id := fmt.Sprintf("rp-%d", replays)
			replays++
			d := func() map[string]any { return map[string]any{"replay_id": id} }
			plan := replay.Plan{ID: id, Vhost: "v", Queue: q, Items: replay.ItemsOf(replay.Item{ID: "m-1"})}
			out = append(out,
				Entry{Action: triage.ActionReplayPlan, Vhost: "v", Queue: q, MessageIDs: plan.IDs(), Details: map[string]any{"replay_id": id, "plan": plan}},
				Entry{Action: triage.ActionReplayStart, Vhost: "v", Queue: q, Details: d()},
				Entry{Action: triage.ActionReplayOutcome, Vhost: "v", Queue: q, MessageIDs: []string{"m-1"}, Reason: string(replay.OutcomeConfirmed), Details: d()})
			switch rng.IntN(killedEvery) {
			case 0: // killed midway
			case 1: // finished, then resumed and left open
				out = append(out, Entry{Action: triage.ActionReplayFinish, Vhost: "v", Queue: q, Details: d()},
					Entry{Action: triage.ActionReplayStart, Vhost: "v", Queue: q, Details: d()})
			default:
				out = append(out, Entry{Action: triage.ActionReplayFinish, Vhost: "v", Queue: q, Details: d()})
			}
		case 1, 2:
			out = append(out, Entry{Action: triage.ActionDiscard, Vhost: "v", Queue: q, MessageIDs: []string{"m-2"}, Reason: "poison",
				Details: map[string]any{"step": "outcome"}})
		default:
			out = append(out, Entry{Action: triage.ActionTag, Vhost: "v", Queue: q, MessageIDs: []string{fmt.Sprintf("m-%d", rng.IntN(50))}, Reason: "seen"})
		}
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for i := range out {
		out[i].Actor, out[i].Time = "ana@bastion", t0.Add(time.Duration(i)*time.Second)
	}
	return out
}

// bulkAppend appends es as Append does, a few thousand a transaction
// (one each would take minutes at 100,000).
func bulkAppend(t testing.TB, j *Journal, es []Entry) {
	t.Helper()
	for chunk := range slices.Chunk(es, 2000) {
		err := j.db.Update(func(tx *bolt.Tx) error {
			for _, e := range chunk {
				if _, err := appendTx(tx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// dropIndex deletes the index, as a journal written before it has none.
func dropIndex(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range indexBuckets {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sameAnswers checks the index against a scan of every entry: the open
// replays, each replay's state, and each queue's history.
func sameAnswers(t *testing.T, j *Journal, es []Entry) {
	t.Helper()
	viaIndex, err := replay.Interrupted(j)
	if err != nil {
		t.Fatal(err)
	}
	viaScan, err := replay.Interrupted(scanOnly{j})
	if err != nil {
		t.Fatal(err)
	}
	if len(viaScan) == 0 || !reflect.DeepEqual(viaIndex, viaScan) {
		t.Fatalf("interrupted: index %d replays, scan %d", len(viaIndex), len(viaScan))
	}
	for _, id := range []string{"rp-0", "rp-3", "rp-none"} {
		a, aerr := replay.Find(j, id)
		b, berr := replay.Find(scanOnly{j}, id)
		if !reflect.DeepEqual(a, b) || (aerr == nil) != (berr == nil) {
			t.Fatalf("find %s: index %+v %v, scan %+v %v", id, a.Status, aerr, b.Status, berr)
		}
	}
	all, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"orders.dlq", "legacy.failed", "nope"} {
		var want []uint64
		for _, e := range slices.Backward(all) {
			if e.Vhost == "v" && e.Queue == q {
				want = append(want, e.Seq)
			}
		}
		got, err := j.QueueHistory("v", q, 0)
		if err != nil {
			t.Fatal(err)
		}
		if seqs := entrySeqs(got); !slices.Equal(seqs, want) {
			t.Fatalf("history of %s: %d entries, want %d", q, len(seqs), len(want))
		}
		if last5, _ := j.QueueHistory("v", q, 5); !slices.Equal(entrySeqs(last5), want[:min(5, len(want))]) {
			t.Fatalf("newest 5 of %s: %v, want %v", q, entrySeqs(last5), want[:min(5, len(want))])
		}
	}
}

func entrySeqs(es []Entry) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

// TestIndexAnswersAsAScanOfEveryEntry: appended one by one, the index finds
// the same open replays, replay states and queue histories as reading
// every entry.
func TestIndexAnswersAsAScanOfEveryEntry(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es := mixedEntries(300, 7)
	for _, e := range es {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	sameAnswers(t, j, es)
	if err := j.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestIndexOfAnOlderJournalIsRebuilt: a journal without the index (written
// before it) answers the same read-only (the entries after the index are
// read), and is indexed on its next open for writing.
func TestIndexOfAnOlderJournalIsRebuilt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	es := mixedEntries(500, 11)
	bulkAppend(t, j, es[:400])
	j.Close()
	dropIndex(t, path)

	ro, err := OpenReadOnly(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, ro, es)
	ro.Close()

	j, err = Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	err = j.db.View(func(tx *bolt.Tx) error {
		if got := indexedTo(tx); got != 400 {
			return fmt.Errorf("indexed to %d after the open, want 400", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es[400:] {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	sameAnswers(t, j, es)
}

// BenchmarkInterrupted100k finds the interrupted replays of a journal of
// 100,000 entries (a replay in 50 entries, one in 100 of them left open),
// through the index and by reading every entry (what the TUI did at every
// start).
func BenchmarkInterrupted100k(b *testing.B) {
	j, err := Open(filepath.Join(b.TempDir(), "j.db"), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	bulkAppend(b, j, journalOf(100_000, 3, 50, 100))
	for _, c := range []struct {
		name string
		j    replay.Journal
	}{{"index", j}, {"scan", scanOnly{j}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if open, err := replay.Interrupted(c.j); err != nil || len(open) == 0 {
					b.Fatal(len(open), err)
				}
			}
		})
	}
}

// BenchmarkOpen100k opens a journal of 100,000 entries for writing: the
// whole chain is checked, one entry at a time.
func BenchmarkOpen100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j.db")
	j, err := Open(path, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	bulkAppend(b, j, mixedEntries(100_000, 3))
	j.Close()
	for b.Loop() {
		j, err := Open(path, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		j.Close()
	}
}

// TestStoredEntriesCheckTheShortWay: every entry Append writes passes the
// short check at its place in the chain, and fails it elsewhere or changed
// by one byte (the long check then names why).
func TestStoredEntriesCheckTheShortWay(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, e := range mixedEntries(60, 5) {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	err = j.db.View(func(tx *bolt.Tx) error {
		prev := ""
		return tx.Bucket(bucketEntries).ForEach(func(k, v []byte) error {
			seq := binary.BigEndian.Uint64(k)
			h, ok := sealedAsStored(v, seq, prev)
			if !ok || h.Entries != seq {
				return fmt.Errorf("entry %d fails the short check", seq)
			}
			if _, ok := sealedAsStored(v, seq+1, prev); ok {
				return fmt.Errorf("entry %d passes at another place", seq)
			}
			changed := bytes.Replace(v, []byte(`"actor":"ana@bastion"`), []byte(`"actor":"ana@bastiom"`), 1)
			if _, ok := sealedAsStored(changed, seq, prev); ok {
				return fmt.Errorf("entry %d passes changed", seq)
			}
			prev = h.Hash
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
