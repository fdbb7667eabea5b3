package cli

import (
	"fmt"
	"os"
	"slices"
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
	Retry string `json:"retry,omitempty"` // the command that discards it again, with the entry's reason
}

func discardedNote(seq uint64, queue string) *DiscardedNote {
	return &DiscardedNote{Entry: seq, Retry: retryCommand(queue, seq),
		Note: fmt.Sprintf("discarded in journal #%d, back in the queue (a broker crash or restart before the ack was written, or published again)", seq)}
}

// retryCommand is the discard of entry seq again (dlqt discard --retry).
func retryCommand(queue string, seq uint64) string {
	return fmt.Sprintf("dlqt discard %s --retry %d --yes", shellWord(sanitize.Line(queue)), seq)
}

// shellWord quotes s for a POSIX shell unless it is plain.
func shellWord(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:/@+=,", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// interruptedNote marks a message a discard selected, in entry seq, that
// never journaled its outcome.
func interruptedNote(seq uint64) *DiscardedNote {
	return &DiscardedNote{Entry: seq, Note: fmt.Sprintf("selected for discard in journal #%d, whose outcome was never journaled (dlqt stopped during it): still in the queue, not discarded", seq)}
}

// discardMarks are the journal's word on the inspected messages: discarded
// yet back, or selected by a discard that was interrupted; id -> entry.
type discardMarks struct {
	queue                  string
	discarded, interrupted map[string]uint64
}

// discardedIn looks the inspected messages up in the journal's discard
// indexes. A read command never creates a journal, and one it cannot open
// (another dlqt holds it) only costs the notes, said on stderr.
func (a *app) discardedIn(in triage.Inspection) discardMarks {
	if in.Len() == 0 || a.demo || a.snapshotPath != "" {
		return discardMarks{}
	}
	if _, err := os.Stat(a.journalPath); err != nil {
		return discardMarks{}
	}
	j, err := a.openJournal()
	if err != nil {
		fmt.Fprintf(a.stderr, "dlqt: note: messages discarded earlier are not marked: %v\n", err)
		return discardMarks{}
	}
	defer j.Close()
	ids := triage.IDs(in.List())
	vhost := in.Batch.Vhost
	if vhost == "" {
		vhost = in.Topology.Vhost
	}
	marks := discardMarks{queue: in.Batch.Queue}
	if marks.discarded, err = j.Discarded(vhost, in.Batch.Queue, ids); err == nil {
		marks.interrupted, err = j.DiscardsInterrupted(vhost, in.Batch.Queue, ids)
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "dlqt: note: messages discarded earlier are not marked: %v\n", err)
		return discardMarks{}
	}
	a.noteMarked(ids, in.Batch.Queue, marks.discarded, "the journal says were discarded are back in", true)
	a.noteMarked(ids, in.Batch.Queue, marks.interrupted, "selected by a discard that never journaled its outcome are still in", false)
	return marks
}

// noteMarked says on stderr which of ids are marked, with their entries;
// with retry, it offers the command that discards them again, once per
// entry, with that entry's reason.
func (a *app) noteMarked(ids []string, queue string, found map[string]uint64, what string, retry bool) {
	if len(found) == 0 {
		return
	}
	var back []string
	var seqs []uint64
	for _, id := range ids {
		if seq, ok := found[id]; ok {
			back = append(back, fmt.Sprintf("%s (#%d)", sanitize.Line(id), seq))
			if !slices.Contains(seqs, seq) {
				seqs = append(seqs, seq)
			}
		}
	}
	offer := ""
	for _, seq := range seqs {
		if retry {
			offer += fmt.Sprintf("; to discard those of #%d again with its reason: %s", seq, retryCommand(queue, seq))
		}
	}
	fmt.Fprintf(a.stderr, "dlqt: %d message(s) %s %s: %s%s\n", len(back), what, sanitize.Line(queue), strings.Join(back, ", "), offer)
}
