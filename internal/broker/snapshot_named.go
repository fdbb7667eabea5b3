package broker

import "slices"

// NewSnapshotReader serves an already-read snapshot (such as the demo bundled
// in the binary) as a triage.Reader; name stands where a file path would.
func NewSnapshotReader(name string, s SnapshotFile) *Snapshot {
	head := s
	head.Batches = slices.Clone(s.Batches)
	for i := range head.Batches {
		head.Batches[i].Messages = nil
	}
	return &Snapshot{path: name, head: head, inMem: &s}
}
