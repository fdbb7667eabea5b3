package broker

// NewSnapshotReader serves an already-read snapshot (such as the demo bundled
// in the binary) as a triage.Reader; name stands where a file path would.
func NewSnapshotReader(name string, s SnapshotFile) *Snapshot {
	return &Snapshot{path: name, file: s}
}
