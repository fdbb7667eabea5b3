package triage

import "time"

// Record is one action for the audit journal, as the use cases describe it;
// the journal adds sequence, time, actor, host and the hash chain.
type Record struct {
	Action     Action
	Vhost      string
	Queue      string
	MessageIDs []string
	Reason     string
	Details    map[string]any
}

// Recorder writes records to the journal. An action whose record cannot be
// written must not go ahead: the journal is the evidence.
type Recorder interface {
	Record(r Record) error
}

// Recorded is a record as the journal gives it back: its place in the
// chain, when and by whom it was written.
type Recorded struct {
	Record
	Seq   uint64
	Time  time.Time
	Actor string
	Host  string
}
