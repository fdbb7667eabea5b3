package triage

// Analyze derives everything dlqt shows from a batch. It never changes the
// messages; red may be nil only in tests that want no redaction.
func Analyze(b Batch, top Topology, red *Redactor) []Triaged {
	panic("not implemented")
}
