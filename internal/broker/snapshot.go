package broker

import (
	"compress/gzip"
	"context"
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
	sw, err := NewSnapshotWriter(w, s)
	if err != nil {
		return err
	}
	for _, b := range s.Batches {
		if err := sw.Batch(b); err != nil {
			return err
		}
	}
	return sw.Close()
}

// ReadSnapshot reads a whole snapshot written by WriteSnapshot (or by an
// older dlqt, indented in one piece), gzipped or not. Errors start with
// "not a dlqt snapshot" when the content is not one. A file-backed
// Snapshot (OpenSnapshot) reads only the batch it is asked for.
func ReadSnapshot(r io.Reader) (SnapshotFile, error) {
	var batches []triage.Batch
	s, err := snapshotScan{batch: func(b triage.Batch, _ int) error {
		batches = append(batches, b)
		return nil
	}}.run(r)
	if err != nil {
		return SnapshotFile{}, err
	}
	s.Batches = batches
	return s, nil
}

// topologyHeaders returns a copy of top with f applied to every argument
// table (queues and bindings); top is not changed.
func topologyHeaders(top triage.Topology, f func(triage.Headers) (triage.Headers, error)) (triage.Topology, error) {
	var err error
	top.Queues = slices.Clone(top.Queues)
	for i := range top.Queues {
		q := &top.Queues[i]
		if q.Arguments, err = f(q.Arguments); err != nil {
			return top, fmt.Errorf("queue %q arguments: %w", q.Name, err)
		}
	}
	top.Bindings = slices.Clone(top.Bindings)
	for i := range top.Bindings {
		b := &top.Bindings[i]
		if b.Arguments, err = f(b.Arguments); err != nil {
			return top, fmt.Errorf("binding %q -> %q arguments: %w", b.Source, b.Destination, err)
		}
	}
	return top, nil
}

// WriteSnapshotFile writes s to path, gzip-compressed (see
// CreateSnapshotFile).
func WriteSnapshotFile(path string, s SnapshotFile) error {
	out, err := CreateSnapshotFile(path, s)
	if err != nil {
		return err
	}
	for _, b := range s.Batches {
		if err := out.Batch(b); err != nil {
			out.Abort()
			return fmt.Errorf("snapshot %s: %w", path, err)
		}
	}
	return out.Commit()
}

// SnapshotOnDisk is a snapshot being written to a file as its batches
// arrive: gzip-compressed, into a temporary file renamed on Commit, so a
// failed capture never leaves half a snapshot under the name asked for.
type SnapshotOnDisk struct {
	*SnapshotWriter
	path string
	tmp  *os.File
	zw   *gzip.Writer
}

// CreateSnapshotFile starts a snapshot at path with head's topology.
func CreateSnapshotFile(path string, head SnapshotFile) (*SnapshotOnDisk, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, unwrapPath(err))
	}
	d := &SnapshotOnDisk{path: path, tmp: tmp, zw: gzip.NewWriter(tmp)}
	if d.SnapshotWriter, err = NewSnapshotWriter(d.zw, head); err != nil {
		d.Abort()
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return d, nil
}

// Commit ends the snapshot and puts it under its name.
func (d *SnapshotOnDisk) Commit() error {
	err := d.Close()
	if err == nil {
		err = d.zw.Close()
	}
	if err == nil {
		err = d.tmp.Close()
	}
	if err == nil {
		err = os.Rename(d.tmp.Name(), d.path)
	}
	if err != nil {
		d.Abort()
		return fmt.Errorf("snapshot %s: %w", d.path, unwrapPath(err))
	}
	return nil
}

// Abort removes what was written.
func (d *SnapshotOnDisk) Abort() {
	d.tmp.Close()
	os.Remove(d.tmp.Name())
}

// Snapshot reads a snapshot file as if it were the broker. It implements
// triage.Reader; nothing it does touches a broker. A file-backed one keeps
// the topology and what each batch holds, not the messages: a browse reads
// the file again, streaming, up to its bound.
type Snapshot struct {
	path  string
	head  SnapshotFile  // batches without their messages
	inMem *SnapshotFile // the whole snapshot, when it came from memory
	// appFrames go with the topology (triage.Topology.AppFrames).
	appFrames []string
}

// UseAppFrames names the packages that are the operator's own (the
// config's app_frames), carried by the topology it returns.
func (s *Snapshot) UseAppFrames(globs []string) { s.appFrames = globs }

var _ triage.Reader = (*Snapshot)(nil)

// OpenSnapshot reads a snapshot file through once, checking every message
// (one at a time, none kept) and noting its batches, so a damaged file
// fails here rather than when a queue is opened. Every error is one line
// naming it.
func OpenSnapshot(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	s := &Snapshot{path: path}
	var batches []triage.Batch
	head, err := snapshotScan{
		message: func(*triage.Batch, triage.Message) error { return nil }, // checked, not kept
		batch: func(b triage.Batch, _ int) error {
			batches = append(batches, b)
			return nil
		},
	}.run(f)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	head.Batches = batches
	s.head = head
	return s, nil
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

// Head is the snapshot without its messages: the topology and what each
// batch says of itself.
func (s *Snapshot) Head() SnapshotFile { return s.head }

// ReadAll is the whole snapshot, every message in memory: for small ones
// and tests; a browse reads only its batch.
func (s *Snapshot) ReadAll() (SnapshotFile, error) {
	if s.inMem != nil {
		return *s.inMem, nil
	}
	f, err := os.Open(s.path)
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("snapshot %s: %w", s.path, unwrapPath(err))
	}
	defer f.Close()
	return ReadSnapshot(f)
}

// Describe names the file and when it was taken.
func (s *Snapshot) Describe() string {
	return fmt.Sprintf("snapshot %s (taken %s)", s.path, s.head.TakenAt.UTC().Format("2006-01-02 15:04 UTC"))
}

// Topology returns the topology recorded with the messages.
func (s *Snapshot) Topology(ctx context.Context) (triage.Topology, error) {
	if err := ctx.Err(); err != nil {
		return triage.Topology{}, err
	}
	top := s.head.Topology
	top.AppFrames = s.appFrames
	return top, nil
}

// Browse returns the recorded batch of queue, trimmed to opts.Limit. Depth
// stays what the broker reported when the snapshot was taken. From a file
// it reads that batch's first Limit messages, streaming, and stops. With
// opts.Each it hands each message over instead of keeping them, and
// without a Limit reads the whole batch, as a streamed broker browse does.
func (s *Snapshot) Browse(ctx context.Context, queue string, opts triage.BrowseOptions) (triage.Batch, error) {
	if err := ctx.Err(); err != nil {
		return triage.Batch{Queue: queue}, err
	}
	k := slices.IndexFunc(s.head.Batches, func(b triage.Batch) bool { return b.Queue == queue })
	if k < 0 {
		return triage.Batch{Queue: queue}, s.notInSnapshot(queue)
	}
	limit := opts.Limit
	if limit <= 0 && opts.Each == nil {
		limit = triage.DefaultBrowseLimit
	}
	b := s.head.Batches[k]
	if limit > 0 {
		b.Limit = min(b.Limit, limit)
		if b.Limit <= 0 {
			b.Limit = limit
		}
	}
	take := func(m triage.Message) error { b.Messages = append(b.Messages, m); return nil }
	if opts.Each != nil {
		take = func(m triage.Message) error { b.Read++; return opts.Each(m) }
	}
	if err := s.messages(ctx, k, limit, take); err != nil {
		b.Err = err
		return b, err
	}
	if opts.Progress != nil {
		opts.Progress(b.Count(), b.Count())
	}
	return b, nil
}

// messages hands the first limit messages of batch k (all when limit <= 0)
// to take, in order. An error of take, or of ctx, stops it and is returned
// as it is.
func (s *Snapshot) messages(ctx context.Context, k, limit int, take func(triage.Message) error) error {
	taken := 0
	var stopped error // take's or ctx's, not the file's
	each := func(m triage.Message) error {
		if stopped = ctx.Err(); stopped == nil {
			stopped = take(m)
		}
		if stopped != nil {
			return errEnough
		}
		if taken++; limit > 0 && taken >= limit {
			return errEnough
		}
		return nil
	}
	if s.inMem != nil {
		for _, m := range s.inMem.Batches[k].Messages {
			if each(m) != nil {
				break
			}
		}
		return stopped
	}
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", s.path, unwrapPath(err))
	}
	defer f.Close()
	seen := -1
	_, err = snapshotScan{
		keep:    func(string) bool { seen++; return seen == k },
		message: func(_ *triage.Batch, m triage.Message) error { return each(m) },
		batch: func(triage.Batch, int) error {
			if seen >= k {
				return errEnough
			}
			return nil
		},
	}.run(f)
	if stopped != nil {
		return stopped
	}
	if err = ignoreEnough(err); err != nil {
		return fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	return nil
}

// ignoreEnough is err, or nil when it only says the scan had what it
// came for.
func ignoreEnough(err error) error {
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

func (s *Snapshot) notInSnapshot(queue string) error {
	var names []string
	for _, b := range s.head.Batches {
		names = append(names, fmt.Sprintf("%q", b.Queue))
	}
	has := "no queues"
	if len(names) > 0 {
		has = "only " + strings.Join(names, ", ")
	}
	return notFound(fmt.Sprintf("queue %q is not in snapshot %s (it has %s)", queue, s.path, has))
}
