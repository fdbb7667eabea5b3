package journal

import (
	"io"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// Recorder writes the use cases' records as journal entries under one actor
// and host. It implements triage.Recorder.
type Recorder struct {
	j           store
	actor, host string
}

// store is what a Recorder writes to and exports from: a *Journal held
// open, or a *Shared opened for each call.
type store interface {
	Append(Entry) (Entry, error)
	Export(w io.Writer, format string, since time.Time) (int, error)
}

var _ triage.Recorder = (*Recorder)(nil)

// NewRecorder records into j as actor on host.
func NewRecorder(j store, actor, host string) *Recorder {
	return &Recorder{j: j, actor: actor, host: host}
}

// Record appends r as the next entry.
func (r *Recorder) Record(rec triage.Record) error {
	_, err := r.j.Append(Entry{
		Actor:      r.actor,
		Host:       r.host,
		Action:     rec.Action,
		Vhost:      rec.Vhost,
		Queue:      rec.Queue,
		MessageIDs: rec.MessageIDs,
		Reason:     rec.Reason,
		Details:    rec.Details,
	})
	return err
}

// Export writes the journal to w (see Journal.Export) and then records the
// export, so the journal itself says what left it and when. The export does
// not contain its own entry.
func (r *Recorder) Export(w io.Writer, format string, since time.Time) (int, error) {
	if format == "" {
		format = FormatJSONL
	}
	n, err := r.j.Export(w, format, since)
	if err != nil {
		return n, err
	}
	details := map[string]any{"format": format, "count": n}
	if !since.IsZero() {
		details["since"] = since.UTC().Format(time.RFC3339Nano)
	}
	return n, r.Record(triage.Record{Action: triage.ActionExport, Details: details})
}
