package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// TestOldPlainSnapshotsStillOpen: the demo bundled in the binary is a
// plain, indented snapshot from before streaming; it opens, browses, and
// written again (gzip, streamed) reads back the same.
func TestOldPlainSnapshotsStillOpen(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "demo.snapshot.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw[0] != '{' {
		t.Fatal("the demo is no longer a plain JSON snapshot")
	}
	old, err := broker.ReadSnapshot(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	s, err := broker.OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Batches) == 0 || len(s.Head().Batches) != len(old.Batches) {
		t.Fatalf("%d batches, head %d", len(old.Batches), len(s.Head().Batches))
	}
	for _, want := range old.Batches {
		got, err := s.Browse(context.Background(), want.Queue, triage.BrowseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Messages, want.Messages) || got.Depth != want.Depth {
			t.Fatalf("%s: browse differs from the whole read", want.Queue)
		}
	}
	again := filepath.Join(t.TempDir(), "demo.snapshot")
	if err := broker.WriteSnapshotFile(again, old); err != nil {
		t.Fatal(err)
	}
	s2, err := broker.OpenSnapshot(again)
	if err != nil {
		t.Fatal(err)
	}
	if all, err := s2.ReadAll(); err != nil || !reflect.DeepEqual(all, old) {
		t.Fatalf("rewritten demo differs (%v)", err)
	}
}

// bulkMessage is message i of a large capture: 1 KiB of body.
func bulkMessage(i int) triage.Message {
	body := bytes.Repeat([]byte{'a' + byte(i%26)}, 1024)
	copy(body, fmt.Sprintf(`{"n":%d}`, i))
	return triage.Message{Queue: "bulk.dlq", Position: i, Body: body,
		Properties: triage.Properties{MessageID: fmt.Sprintf("m-%06d", i)},
		Headers:    triage.Headers{"x-death": []any{triage.Headers{"queue": "bulk", "reason": "rejected", "count": int64(1)}}}}
}

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSnapshotStreamsToDiskAndBack: 100,000 messages of 1 KiB are written
// as they come and read back a bound at a time; the heap never holds them
// (100 MiB of bodies), and what follows a batch's messages (depth, bound,
// where it stopped) is read back too.
func TestSnapshotStreamsToDiskAndBack(t *testing.T) {
	const n = 100_000
	path := filepath.Join(t.TempDir(), "bulk.snapshot")
	taken := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	top := triage.Topology{Vhost: "scale", Queues: []triage.Queue{{Name: "bulk.dlq", Messages: 1_200_000}, {Name: "small.dlq"}}}
	base := heapNow()
	out, err := broker.CreateSnapshotFile(path, broker.SnapshotFile{Source: "test", TakenAt: taken, Topology: top})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.BeginBatch("scale", "bulk.dlq"); err != nil {
		t.Fatal(err)
	}
	peak := uint64(0)
	for i := range n {
		if err := out.Message(bulkMessage(i)); err != nil {
			t.Fatal(err)
		}
		if i%20_000 == 0 {
			peak = max(peak, heapNow())
		}
	}
	unreadable := &triage.Unreadable{Position: n, Reason: "headers nested too deep"}
	if err := out.EndBatch(triage.Batch{Depth: 1_200_000, Limit: n, TakenAt: taken, Unreadable: unreadable}); err != nil {
		t.Fatal(err)
	}
	if err := out.Batch(triage.Batch{Vhost: "scale", Queue: "small.dlq", Depth: 1, Limit: 10, TakenAt: taken,
		Messages: []triage.Message{bulkMessage(7)}}); err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	if grew := int64(peak) - int64(base); grew > 16<<20 {
		t.Errorf("writing grew the heap by %d MiB: it holds what it wrote", grew>>20)
	}
	st, _ := os.Stat(path)
	if st.Size() > n*1024/4 {
		t.Errorf("%d bytes on disk for %d KiB of bodies: not compressed", st.Size(), n)
	}

	s, err := broker.OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := heapNow(); int64(got)-int64(base) > 16<<20 {
		t.Errorf("opening holds %d MiB", (got-base)>>20)
	}
	b, err := s.Browse(context.Background(), "bulk.dlq", triage.BrowseOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if ids := messageIDs(b.Messages); !slices.Equal(ids, []string{"m-000000", "m-000001", "m-000002"}) ||
		b.Depth != 1_200_000 || b.Limit != 3 || b.Unreadable == nil || b.Unreadable.Position != n || b.Queue != "bulk.dlq" {
		t.Fatalf("browse: %v depth %d limit %d unreadable %+v", ids, b.Depth, b.Limit, b.Unreadable)
	}
	if !reflect.DeepEqual(b.Messages[1], bulkMessage(1)) {
		t.Fatalf("message 1 differs:\n%#v\n%#v", b.Messages[1], bulkMessage(1))
	}
	// streamed: the whole batch, each message handed over and dropped
	seen, streamPeak := 0, uint64(0)
	whole, err := s.Browse(context.Background(), "bulk.dlq", triage.BrowseOptions{Each: func(m triage.Message) error {
		if m.Properties.MessageID != fmt.Sprintf("m-%06d", seen) {
			return fmt.Errorf("message %d is %s", seen, m.Properties.MessageID)
		}
		if seen++; seen%25_000 == 0 {
			streamPeak = max(streamPeak, heapNow())
		}
		return nil
	}})
	if err != nil || seen != n || whole.Read != n || len(whole.Messages) != 0 || whole.Depth != 1_200_000 {
		t.Fatalf("streamed browse: %d seen, read %d, %d kept, %v", seen, whole.Read, len(whole.Messages), err)
	}
	if grew := int64(streamPeak) - int64(base); grew > 16<<20 {
		t.Errorf("a streamed browse grew the heap by %d MiB", grew>>20)
	}
	stop := fmt.Errorf("enough")
	if _, err := s.Browse(context.Background(), "bulk.dlq", triage.BrowseOptions{Each: func(triage.Message) error { return stop }}); err != stop {
		t.Errorf("the caller's error came back as %v", err)
	}
	small, err := s.Browse(context.Background(), "small.dlq", triage.BrowseOptions{})
	if err != nil || len(small.Messages) != 1 || small.Messages[0].Properties.MessageID != "m-000007" {
		t.Fatalf("the batch after the large one: %+v, %v", small.Messages, err)
	}
}
