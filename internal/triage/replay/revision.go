package replay

import "github.com/dlqt/dlqt/internal/triage"

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
	ID             string `json:"id"`
	Body           []byte `json:"body"`
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
	for i, it := range p.Items {
		if rev, ok := revs[it.ID]; ok {
			p.Items[i].Revision = &rev
		}
	}
}
