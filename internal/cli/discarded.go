package cli

import (
	"fmt"
	"os"
	"strings"

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
	if len(in.Messages) == 0 || a.demo || a.snapshotPath != "" {
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
	defer j.Close()
	ids := make([]string, len(in.Messages))
	for i, t := range in.Messages {
		ids[i] = t.ID
	}
	vhost := in.Batch.Vhost
	if vhost == "" {
		vhost = in.Topology.Vhost
	}
	found, err := j.Discarded(vhost, in.Batch.Queue, ids)
	if err != nil {
		fmt.Fprintf(a.stderr, "dlqt: note: messages discarded earlier are not marked: %v\n", err)
		return nil
	}
	if len(found) > 0 {
		var back []string
		for _, id := range ids {
			if seq, ok := found[id]; ok {
				back = append(back, fmt.Sprintf("%s (#%d)", sanitize.Line(id), seq))
			}
		}
		fmt.Fprintf(a.stderr, "dlqt: %d message(s) the journal says were discarded are back in %s: %s\n",
			len(back), sanitize.Line(in.Batch.Queue), strings.Join(back, ", "))
	}
	return found
}
