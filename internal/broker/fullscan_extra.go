package broker

import "github.com/dlqt/dlqt/internal/triage"

// extraCopies tells, as a full scan reads the queue, which messages are
// extra copies left by interrupted scans. A scan that stops between a
// copy's confirm and its original's ack leaves both: the original goes
// back to the queue (redelivered) and the copy carries that scan's mark.
// Such a pair is a message carrying the mark of an interrupted scan whose
// key (id and content) was in that scan's journaled windows, and a
// redelivered message of the same key without that mark. They may come in
// either order (a quorum queue puts what a dead channel held back in no
// fixed order): the first of the pair is moved, the second is acked
// without a copy, after the first one's copy is confirmed. A copy whose
// original was acked has no partner and is moved: never the only copy.
type extraCopies struct {
	scans []*pairing // newest first
}

// pairing is one interrupted scan's unpaired keys.
type pairing struct {
	id        string
	inFlight  map[string]int // journaled, not yet paired
	originals map[string]int // originals read and moved, not yet paired
	copies    map[string]int // its copies read and moved, not yet paired
}

func newExtraCopies(scans []InterruptedScan) *extraCopies {
	x := &extraCopies{}
	for _, s := range scans {
		p := &pairing{id: s.ScanID, inFlight: map[string]int{}, originals: map[string]int{}, copies: map[string]int{}}
		for i, id := range s.IDs {
			if i < len(s.Contents) {
				p.inFlight[pairKey(id, s.Contents[i])]++
			}
		}
		x.scans = append(x.scans, p)
	}
	return x
}

// extra reports whether the message read now (its pair key, the scan mark
// it carries, its redelivered flag) completes a pair, and pairs it if so.
// A message stands for one scan only, the newest whose windows held it.
func (x *extraCopies) extra(key, mark string, redelivered bool) bool {
	for _, p := range x.scans {
		if p.inFlight[key] == 0 {
			continue
		}
		switch {
		case p.id == mark: // a copy of p's
			return p.meet(key, p.copies, p.originals)
		case redelivered: // an original p may have left behind
			return p.meet(key, p.originals, p.copies)
		}
	}
	return false
}

// meet pairs key with an unpaired partner; else it counts key unpaired,
// as far as p's windows held it.
func (p *pairing) meet(key string, mine, partners map[string]int) bool {
	if partners[key] > 0 {
		partners[key]--
		p.inFlight[key]--
		return true
	}
	if mine[key] < p.inFlight[key] {
		mine[key]++
	}
	return false
}

// pairKey is what a copy shares with its original: the id and a hash of
// the content (body, properties and headers that do not change on
// redelivery or with the scan's mark), so two messages that only share
// an id are never taken for one message twice.
func pairKey(id, content string) string { return id + " " + content }

// contentKey is the content hash of m (its identity without message id).
func contentKey(m triage.Message) string {
	m.Properties.MessageID = ""
	return triage.BaseIDs([]triage.Message{m}, nil)[0]
}
