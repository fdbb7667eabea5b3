package broker

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// A snapshot file arrives from another machine, maybe hand-edited or
// truncated: reading it must fail with a "not a dlqt snapshot" line or give
// a snapshot that round-trips and can be triaged, never panic.
func FuzzReadSnapshot(f *testing.F) {
	if demo, err := os.ReadFile("../../testdata/demo.snapshot.json"); err == nil {
		f.Add(demo)
	}
	f.Add([]byte(`{"format":"dlqt-snapshot/1","batches":[{"queue":"q","messages":[{"queue":"q","headers":{"x-death":{"list":[{"table":{"count":{"int":"1"},"time":{"time":"2026-11-30T10:00:00Z"}}}]}},"body":"e30="}]}]}`))
	f.Add([]byte(`{"format":"dlqt-snapshot/1","batches":[{"queue":"q","messages":[{"headers":{"k":{"bytes":"!!"}}}]}]}`))
	f.Add([]byte("\x1f\x8b\x08\x00"))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "not a dlqt snapshot") {
				t.Fatalf("error does not say what is wrong: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteSnapshot(&buf, s); err != nil {
			t.Fatalf("a snapshot that reads does not write: %v", err)
		}
		if _, err := ReadSnapshot(&buf); err != nil {
			t.Fatalf("a snapshot written back does not read: %v", err)
		}
		r := NewSnapshotReader("fuzz", s)
		for _, b := range s.Batches {
			in, err := triage.Inspect(context.Background(), r, b.Queue, triage.BrowseOptions{}, redact.New())
			if err != nil {
				continue // a queue missing from the topology is a clean error
			}
			for _, m := range in.Messages {
				if strings.ContainsAny(m.Payload+m.ID+m.ReasonCode, "\x1b\x07") {
					t.Fatalf("a raw control character survived triage: %q", m.ID)
				}
			}
		}
	})
}
