package triage

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// sweepPass classifies the messages a discard's sweep holds one at a time,
// as they are read (BrowseOptions.Each), and keeps of each only what the
// discard needs: its base identity (to number the occurrence suffixes and
// verify the removal by), and the whole triaged message only when it may be
// selected by id. A sweep of a large queue so keeps the bodies of what it
// may discard by id, and of a group or filter selection none: those match
// on what a message says, never on its identity (Group.Matches reads the
// reason and code, no filter field reads the id), so the match made as it
// passes is final. Candidates by id are matched again (Selection.Matches)
// once their identities are final.
type sweepPass struct {
	r     *router
	red   *redact.Redactor
	sel   Selection
	maybe map[string]bool // base ids a selected id may have; nil without ids
	ids   idSuffixer      // provisional ids, unique, for the filter's cache (with Where only)

	bases []string  // base id of every message, in queue order
	cands []Triaged // the messages that may be selected by id
	pos   []int     // position of each of cands; without ids, of each match

	bodies  map[string]string // DiscardRequest.Bodies
	changed map[string]string // selected ids held with another body: id -> its SHA-256
}

func newSweepPass(top Topology, red *redact.Redactor, sel Selection) *sweepPass {
	p := &sweepPass{r: newRouter(top), red: red, sel: sel, ids: newIDSuffixer()}
	if len(sel.IDs) > 0 {
		p.maybe = make(map[string]bool, len(sel.IDs))
		for _, id := range sel.IDs {
			p.maybe[id] = true
			if i := strings.LastIndexByte(id, '#'); i > 0 {
				if _, err := strconv.Atoi(id[i+1:]); err == nil {
					p.maybe[id[:i]] = true // an occurrence suffix (SuffixIDs)
				}
			}
		}
	}
	return p
}

// take is BrowseOptions.Each: one message, in queue order.
func (p *sweepPass) take(m Message) error {
	env := EnvelopeOf(m)
	base := BaseIDs([]Message{m}, []Envelope{env})[0]
	p.bases = append(p.bases, base)
	if p.maybe != nil && !p.maybe[base] {
		return nil // not one of the ids, whatever its suffix
	}
	provisional := base // a group, and ids (given their final ones below), read no identity
	if p.sel.Where != nil {
		provisional = p.ids.assign(base) // a hash of every id: 1,000,000 are tens of MB
	}
	// Without its payload rendered or its timeline built: no selection
	// reads them (text~ and tenant= render the body with the filter's own
	// redactor). Rendered, they were 6 KB of garbage a message, 1.8 GB
	// over a sweep of 300,000.
	t := analyzeOne(p.r, m, env, provisional, p.red, false)
	// Where and the group read no identity: what they refuse now they
	// refuse with the final one.
	if p.sel.Where != nil && !p.sel.Where.Match(t) {
		return nil
	}
	if p.sel.Group != nil && !p.sel.Group.Matches(t) {
		return nil
	}
	if p.maybe == nil {
		// A group or filter decided, with no identity needed: the position
		// is all a pick needs.
		p.pos = append(p.pos, len(p.bases)-1)
		return nil
	}
	p.cands = append(p.cands, t)
	p.pos = append(p.pos, len(p.bases)-1)
	return nil
}

// picks gives every message its final identity (SuffixIDs over the whole
// hold, as Identify numbers a batch) and returns the identities and the
// positions selected.
func (p *sweepPass) picks() (ids []string, picks []int) {
	ids = SuffixIDs(p.bases)
	if p.maybe == nil {
		return ids, slices.Clone(p.pos)
	}
	selected := p.sel.Matcher()
	for k := range p.cands {
		t := &p.cands[k]
		t.ID = ids[p.pos[k]]
		if selected(*t) && p.sameBody(*t) {
			picks = append(picks, p.pos[k])
		}
	}
	return ids, picks
}

// sameBody reports whether t's body is the one its decision named (always,
// when the decision named none), and notes it changed otherwise.
func (p *sweepPass) sameBody(t Triaged) bool {
	want, named := p.bodies[t.ID]
	if !named {
		return true
	}
	if sum := BodySHA256(t.Message.Body); sum != want {
		if p.changed == nil {
			p.changed = map[string]string{}
		}
		p.changed[t.ID] = sum
		return false
	}
	return true
}
