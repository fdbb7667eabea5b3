package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// DiscardedNote marks a message the journal says was discarded: its ack
// was never applied (a broker restart came first), or the same id was
// published again.
type DiscardedNote struct {
	Entry uint64 `json:"entry"`
	Note  string `json:"note"`
}

func discardedNote(seq uint64) *DiscardedNote {
	return &DiscardedNote{Entry: seq, Note: fmt.Sprintf("discarded in journal #%d, back in the queue (a broker restart before the ack was applied, or published again)", seq)}
}

// discardedIn looks the inspected messages up in the journal's discard
// index. A read command never creates a journal, and one it cannot open
// (another dlqt holds it) only costs the note, said on stderr.
func (a *app) discardedIn(in triage.Inspection) map[string]uint64 {
	if len(in.Messages) == 0 {
		return nil
	}
	vhost := in.Batch.Vhost
	if vhost == "" {
		vhost = in.Topology.Vhost
	}
	marks := a.openDiscardMarks(vhost, in.Batch.Queue)
	defer marks.close()
	ids := make([]string, len(in.Messages))
	for i, t := range in.Messages {
		ids[i] = t.ID
	}
	return marks.lookup(ids)
}

// discardMarks looks messages up in the journal's discard index as a
// streamed read hands them over, a chunk at a time; nil marks nothing.
type discardMarks struct {
	a            *app
	j            *journal.Shared
	vhost, queue string
	back         []string
}

func (a *app) openDiscardMarks(vhost, queue string) *discardMarks {
	if a.demo || a.snapshotPath != "" {
		return nil
	}
	if _, err := os.Stat(a.journalPath); err != nil {
		return nil
	}
	j, err := a.openJournal()
	if err != nil {
		fmt.Fprintf(a.stderr, "dlqt: note: messages discarded earlier are not marked: %v\n", err)
		return nil
	}
	return &discardMarks{a: a, j: j, vhost: vhost, queue: queue}
}

func (d *discardMarks) lookup(ids []string) map[string]uint64 {
	if d == nil || d.j == nil || len(ids) == 0 {
		return nil
	}
	found, err := d.j.Discarded(d.vhost, d.queue, ids)
	if err != nil {
		fmt.Fprintf(d.a.stderr, "dlqt: note: messages discarded earlier are not marked: %v\n", err)
		d.j.Close()
		d.j = nil
		return nil
	}
	for _, id := range ids {
		if seq, ok := found[id]; ok {
			d.back = append(d.back, fmt.Sprintf("%s (#%d)", sanitize.Line(id), seq))
		}
	}
	return found
}

// close says which discarded messages came back, and closes the journal.
func (d *discardMarks) close() {
	if d == nil {
		return
	}
	if d.j != nil {
		d.j.Close()
	}
	if len(d.back) > 0 {
		fmt.Fprintf(d.a.stderr, "dlqt: %d message(s) the journal says were discarded are back in %s: %s\n",
			len(d.back), sanitize.Line(d.queue), strings.Join(d.back, ", "))
	}
}
