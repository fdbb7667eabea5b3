package replay

import (
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// Headers a replay of an edited message adds: which revision was published
// and the SHA-256 of the original body, which stays in the journal.
const (
	HeaderRevision       = "x-dlqt-revision"
	HeaderOriginalSHA256 = "x-dlqt-original-sha256"
)

// Revision is an approved edit of an item's body: the copy carries Body,
// the original message_id and every other property; the parked original is
// acked only after that copy is confirmed, like any other.
type Revision struct {
	ID string `json:"id"`
	// Body is never journaled with the plan (json "-"): the journal keeps
	// edited bodies apart, and a resume reads it back by SHA256.
	Body   []byte `json:"-"`
	SHA256 string `json:"sha256,omitempty"`
	// Inline is the body as plans journaled before kept it: read for a
	// resume, never written again.
	Inline         []byte `json:"body,omitempty"`
	OriginalSHA256 string `json:"original_sha256"`
}

// apply puts the revision's body and headers on the outgoing copy m (its
// headers already a copy); a nil revision leaves m as it is.
func (rev *Revision) apply(m triage.Message) triage.Message {
	if rev == nil {
		return m
	}
	m.Body = rev.Body
	m.Headers[HeaderRevision] = rev.ID
	m.Headers[HeaderOriginalSHA256] = rev.OriginalSHA256
	return m
}

// UseRevisions gives each item that has one its revision (by item id).
func (p *Plan) UseRevisions(revs map[string]Revision) {
	for i, it := range p.Items.All() {
		if rev, ok := revs[it.ID]; ok {
			it.Revision = &rev
			p.Items.Set(i, it)
		}
	}
}

// NameBodies binds each item to the body SHA-256 a decision named it by
// (an approved proposal's), by item id; nil binds none.
func (p *Plan) NameBodies(sums map[string]string) {
	for i, it := range p.Items.All() {
		if sum, ok := sums[it.ID]; ok {
			it.BodySHA256 = sum
			p.Items.Set(i, it)
		}
	}
}

// Changed is changed, for a dry run over the bodies the read saw: the run
// checks again what it holds.
func (it Item) Changed(body []byte) string { return it.changed(triage.BodySHA256(body)) }

// changed says why the body held under the item's id is not the one its
// decisions were made on, "" when it is. An approved proposal names the
// body it was approved for, a revision the body it was edited from: the
// same id on another body is another message (a producer's retry, a
// second incident), and publishing the old edit over it, or acking it
// for a decision about its predecessor, would lose it.
func (it Item) changed(now string) string {
	switch {
	case it.BodySHA256 != "" && it.BodySHA256 != now:
		return fmt.Sprintf("changed since the proposal named it (body sha256 %s, now %s): not replayed, propose again", short(it.BodySHA256), short(now))
	case it.Revision != nil && (it.Revision.Body == nil || triage.BodySHA256(it.Revision.Body) != it.Revision.SHA256):
		return fmt.Sprintf("revision %s: its edited body is not at hand, or not the one its sha256 %s names: not replayed", it.Revision.ID, short(it.Revision.SHA256))
	case it.Revision != nil && it.Revision.OriginalSHA256 != now:
		return fmt.Sprintf("revision %s was made from a body with sha256 %s, the message now has %s: not replayed, edit the new body if it needs it", it.Revision.ID, short(it.Revision.OriginalSHA256), short(now))
	}
	return ""
}

// short is the first 12 hex digits of a SHA-256: enough to tell bodies apart
// in a sentence; the journal keeps the whole.
func short(sum string) string { return sum[:min(12, len(sum))] }
