package broker

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// SnapshotFormat names version 1 of the snapshot file layout.
const SnapshotFormat = "dlqt-snapshot/1"

// SnapshotFile is an offline copy of what dlqt read from a broker: the
// topology needed to classify messages and one bounded batch per queue.
type SnapshotFile struct {
	Format   string          `json:"format"`
	Source   string          `json:"source"` // Describe() of the reader it came from
	TakenAt  time.Time       `json:"taken_at"`
	Topology triage.Topology `json:"topology"`
	Batches  []triage.Batch  `json:"batches"`
	// Redacted says the bodies and headers were written through the
	// redaction rules (dlqt snapshot's default); false is raw.
	Redacted bool `json:"redacted,omitempty"`
}

// Capture browses each queue of r into a SnapshotFile. A browse that stops
// early ends the capture: the file holds what was read, and the error says
// which queue stopped.
func Capture(ctx context.Context, r triage.Reader, queues []string, opts triage.BrowseOptions) (SnapshotFile, error) {
	s := SnapshotFile{Format: SnapshotFormat, Source: r.Describe(), TakenAt: time.Now().UTC()}
	top, err := r.Topology(ctx)
	if err != nil {
		return s, err
	}
	s.Topology = top
	for _, q := range queues {
		b, err := r.Browse(ctx, q, opts)
		if len(b.Messages) > 0 || err == nil {
			s.Batches = append(s.Batches, b)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// WriteSnapshot writes s as JSON. Header and argument values are tagged with
// their types (see headerjson.go) so ReadSnapshot gives back what was written.
func WriteSnapshot(w io.Writer, s SnapshotFile) error {
	if s.Format == "" {
		s.Format = SnapshotFormat
	}
	tagged, err := withHeaders(s, func(h triage.Headers) (triage.Headers, error) {
		return tagHeaders(h), nil
	})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(tagged)
}

// ReadSnapshot reads a snapshot written by WriteSnapshot, gzipped or not.
// Errors start with "not a dlqt snapshot" when the content is not one.
func ReadSnapshot(r io.Reader) (SnapshotFile, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return SnapshotFile{}, fmt.Errorf("not a dlqt snapshot: %v", err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var s SnapshotFile
	if err := dec.Decode(&s); err != nil {
		return SnapshotFile{}, fmt.Errorf("not a dlqt snapshot: %v", err)
	}
	if s.Format != SnapshotFormat {
		return SnapshotFile{}, fmt.Errorf("not a dlqt snapshot: format %q, want %q", s.Format, SnapshotFormat)
	}
	s, err := withHeaders(s, untagHeaders)
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("not a dlqt snapshot: %v", err)
	}
	return s, nil
}

// withHeaders returns a copy of s with f applied to every header table:
// queue arguments, binding arguments and message headers. s is not changed.
func withHeaders(s SnapshotFile, f func(triage.Headers) (triage.Headers, error)) (SnapshotFile, error) {
	var err error
	s.Topology.Queues = slices.Clone(s.Topology.Queues)
	for i := range s.Topology.Queues {
		q := &s.Topology.Queues[i]
		if q.Arguments, err = f(q.Arguments); err != nil {
			return s, fmt.Errorf("queue %q arguments: %w", q.Name, err)
		}
	}
	s.Topology.Bindings = slices.Clone(s.Topology.Bindings)
	for i := range s.Topology.Bindings {
		b := &s.Topology.Bindings[i]
		if b.Arguments, err = f(b.Arguments); err != nil {
			return s, fmt.Errorf("binding %q -> %q arguments: %w", b.Source, b.Destination, err)
		}
	}
	s.Batches = slices.Clone(s.Batches)
	for i := range s.Batches {
		b := &s.Batches[i]
		b.Messages = slices.Clone(b.Messages)
		for j := range b.Messages {
			m := &b.Messages[j]
			if m.Headers, err = f(m.Headers); err != nil {
				return s, fmt.Errorf("queue %q message %d: %w", b.Queue, j, err)
			}
		}
	}
	return s, nil
}

// WriteSnapshotFile writes s to path, gzipped when path ends in .gz. It
// writes a temporary file and renames it, so a failed capture never leaves
// half a snapshot under the name asked for.
func WriteSnapshotFile(path string, s SnapshotFile) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var w io.Writer = tmp
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(tmp)
		w = zw
	}
	if err = WriteSnapshot(w, s); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	if zw != nil {
		if err = zw.Close(); err != nil {
			return fmt.Errorf("snapshot %s: %w", path, err)
		}
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, unwrapPath(err))
	}
	return nil
}

// Snapshot reads a snapshot file as if it were the broker. It implements
// triage.Reader; nothing it does touches a broker.
type Snapshot struct {
	path string
	file SnapshotFile
}

var _ triage.Reader = (*Snapshot)(nil)

// OpenSnapshot reads a snapshot file. Every error is one line naming it.
func OpenSnapshot(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	s, err := ReadSnapshot(f)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return &Snapshot{path: path, file: s}, nil
}

// unwrapPath drops the *PathError wrapper, whose text repeats the path,
// keeping the cause (and errors.Is(err, fs.ErrNotExist)).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// File returns what the snapshot holds.
func (s *Snapshot) File() SnapshotFile { return s.file }

// Describe names the file and when it was taken.
func (s *Snapshot) Describe() string {
	return fmt.Sprintf("snapshot %s (taken %s)", s.path, s.file.TakenAt.UTC().Format("2006-01-02 15:04 UTC"))
}

// Topology returns the topology recorded with the messages.
func (s *Snapshot) Topology(ctx context.Context) (triage.Topology, error) {
	if err := ctx.Err(); err != nil {
		return triage.Topology{}, err
	}
	return s.file.Topology, nil
}

// Browse returns the recorded batch of queue, trimmed to opts.Limit. Depth
// stays what the broker reported when the snapshot was taken.
func (s *Snapshot) Browse(ctx context.Context, queue string, opts triage.BrowseOptions) (triage.Batch, error) {
	if err := ctx.Err(); err != nil {
		return triage.Batch{Queue: queue}, err
	}
	var names []string
	for _, b := range s.file.Batches {
		if b.Queue != queue {
			names = append(names, fmt.Sprintf("%q", b.Queue))
			continue
		}
		limit := opts.Limit
		if limit <= 0 {
			limit = triage.DefaultBrowseLimit
		}
		if len(b.Messages) > limit {
			b.Messages = b.Messages[:limit:limit]
		}
		b.Limit = min(b.Limit, limit)
		if b.Limit <= 0 {
			b.Limit = limit
		}
		if opts.Progress != nil {
			opts.Progress(len(b.Messages), len(b.Messages))
		}
		return b, nil
	}
	has := "no queues"
	if len(names) > 0 {
		has = "only " + strings.Join(names, ", ")
	}
	return triage.Batch{Queue: queue}, notFound(fmt.Sprintf("queue %q is not in snapshot %s (it has %s)", queue, s.path, has))
}
