package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// Revision is an edited body of a parked message. Editing never touches
// the queue: the revision lives in the journal, and a replay of the
// message publishes its latest approved revision instead of the original,
// only over the body it was made from (SHA256Before).
//
// The journal, which every viewer reads, shows the SHA-256 before and after
// and the changed paths with redacted values; the edited body is kept
// apart, by SHA256After, where only a replay reads it (BodyStore).
type Revision struct {
	ID        string `json:"id"`
	MessageID string `json:"message_id"`
	Vhost     string `json:"vhost"`
	Queue     string `json:"queue"`
	// Body is the edited body: never journaled nor printed (json "-").
	Body []byte `json:"-"`
	// InlineBody and OriginalBody are what journals kept inline before
	// bodies were kept apart: read, for a replay and for the chain, never
	// written again.
	InlineBody   string        `json:"body,omitempty"`
	OriginalBody string        `json:"original_body,omitempty"`
	SHA256Before string        `json:"sha256_before"`
	SHA256After  string        `json:"sha256_after"`
	Changes      []FieldChange `json:"changes"` // values as the redactor masks them
	Actor        string        `json:"actor"`
	Reason       string        `json:"reason"`
	At           time.Time     `json:"at"`
	// Proposal is the edit's proposal when the policy asks a second person
	// for edits; the revision counts only once it is approved.
	Proposal string `json:"proposal,omitempty"`
}

// FieldChange is one field an edit set, with its JSON before and after
// (before is empty when the field was new).
type FieldChange struct {
	Path   string `json:"path"`
	Before string `json:"before,omitempty"`
	After  string `json:"after"`
}

// Set is one --set PATH=VALUE: VALUE is taken as JSON when it parses
// (42, true, null, "text", {"a":1}), else as a string.
type Set struct {
	Path, Value string
}

// ParseSet reads PATH=VALUE; PATH is a dot path (customer.address.zip,
// items.0.qty), an optional leading "$." or "." is dropped.
func ParseSet(s string) (Set, error) {
	path, value, ok := strings.Cut(s, "=")
	path = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(path), "$"), ".")
	if !ok || path == "" {
		return Set{}, fmt.Errorf("--set %q: want PATH=VALUE, e.g. customer.address.zip=\"10115\"", s)
	}
	return Set{Path: path, Value: value}, nil
}

// ErrNotJSON refuses an edit of a body, or to a body, that is not JSON.
var ErrNotJSON = errors.New("not JSON")

// Edit applies sets to a JSON body and says what changed. A body that is
// not JSON, before or after, is refused: nothing is stored.
func Edit(original []byte, sets []Set) ([]byte, []FieldChange, error) {
	if !json.Valid(original) {
		return nil, nil, fmt.Errorf("the message body is %w: only JSON payloads can be edited", ErrNotJSON)
	}
	if len(sets) == 0 {
		return nil, nil, errors.New("nothing to edit: give at least one --set PATH=VALUE")
	}
	body := original
	var changes []FieldChange
	for _, s := range sets {
		before := gjson.GetBytes(body, s.Path)
		var err error
		if json.Valid([]byte(s.Value)) {
			body, err = sjson.SetRawBytes(body, s.Path, []byte(s.Value))
		} else {
			body, err = sjson.SetBytes(body, s.Path, s.Value)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--set %s: %w", s.Path, err)
		}
		changes = append(changes, FieldChange{Path: s.Path, Before: before.Raw, After: gjson.GetBytes(body, s.Path).Raw})
	}
	if !json.Valid(body) {
		return nil, nil, fmt.Errorf("the edited body is %w: nothing stored", ErrNotJSON)
	}
	return body, changes, nil
}

// NewRevision is the revision of message t that replaces its body with
// body, by actor for reason. Its changes show the values red masks, as
// any read of the message would.
func NewRevision(vhost, queue string, t triage.Triaged, body []byte, changes []FieldChange, red *redact.Redactor, actor, reason string, now time.Time) Revision {
	r := Revision{
		MessageID: t.ID, Vhost: vhost, Queue: queue, Body: slices.Clone(body),
		SHA256Before: SHA256(t.Message.Body), SHA256After: SHA256(body), Changes: redactChanges(changes, t.Message.Body, body, red),
		Actor: actor, Reason: reason, At: now.UTC(),
	}
	r.ID = "rev-" + SHA256([]byte(r.SHA256Before + r.SHA256After + r.At.Format(time.RFC3339Nano)))[:10]
	return r
}

// redactChanges are changes with each value read from the redacted body
// before or after: a masked secret stays masked, and a value under a
// masked subtree reads as masked.
func redactChanges(changes []FieldChange, before, after []byte, red *redact.Redactor) []FieldChange {
	masked := func(body []byte) string {
		out, _, _, err := red.JSON(body, 0)
		if err != nil { // Edit and the editor refused bodies that are not JSON
			return "null"
		}
		return out
	}
	rb, ra := masked(before), masked(after)
	out := make([]FieldChange, len(changes))
	for i, c := range changes {
		out[i].Path = c.Path
		if c.Before != "" {
			out[i].Before = maskedAt(rb, c.Path)
		}
		if c.After != "" {
			out[i].After = maskedAt(ra, c.Path)
		}
	}
	return out
}

// maskedAt is the compact JSON at path of a redacted body; a path a mask
// cut short (its parent became a string) reads as that mask's word.
func maskedAt(redacted, path string) string {
	v := gjson.Get(redacted, path)
	if !v.Exists() {
		return `"[REDACTED]"`
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(v.Raw)); err != nil {
		return `"[REDACTED]"`
	}
	return b.String()
}

// BodyStore keeps revision bodies apart from the journal's entries
// (internal/journal implements it).
type BodyStore interface {
	RevisionBody(sha256 string) ([]byte, error)
}

// BodyOf is the edited body a replay publishes for rev: inline in a
// journal from before bodies were kept apart, else from store; either way
// it must hash to rev.SHA256After.
func BodyOf(rev Revision, store BodyStore) ([]byte, error) {
	if rev.InlineBody != "" {
		if SHA256([]byte(rev.InlineBody)) != rev.SHA256After {
			return nil, fmt.Errorf("revision %s: its journaled body does not hash to its sha256_after %s", rev.ID, rev.SHA256After)
		}
		return []byte(rev.InlineBody), nil
	}
	body, err := store.RevisionBody(rev.SHA256After)
	if err != nil {
		return nil, fmt.Errorf("revision %s of %s: %w", rev.ID, rev.MessageID, err)
	}
	return body, nil
}

// SHA256 is the hex SHA-256 of b.
func SHA256(b []byte) string { return triage.BodySHA256(b) }

// RevisionRecord is whether ApprovedRevisions reads a record of action a:
// edits and the proposals' records, which say whether an edit counts.
func RevisionRecord(a triage.Action) bool { return a == triage.ActionEdit || a.IsProposal() }

// ApprovedRevisions are, per message id of vhost and queue, the latest
// revision that counts: one made without a proposal, or whose proposal
// was approved and never rejected. rs may hold only the records
// RevisionRecord takes.
func ApprovedRevisions(rs []triage.Recorded, vhost, queue string) (map[string]Revision, error) {
	states, err := Fold(rs)
	if err != nil {
		return nil, err
	}
	approved := map[string]bool{}
	for _, s := range states {
		_, ok := s.Approval()
		approved[s.Proposal.ID] = ok && !s.Rejected()
	}
	out := map[string]Revision{}
	for _, r := range rs {
		if r.Action != triage.ActionEdit {
			continue
		}
		var rev Revision
		if err := redecode(r.Details["revision"], &rev); err != nil {
			return nil, fmt.Errorf("entry %d: revision: %w", r.Seq, err)
		}
		if rev.Vhost == vhost && rev.Queue == queue && (rev.Proposal == "" || approved[rev.Proposal]) {
			out[rev.MessageID] = rev
		}
	}
	return out, nil
}

// Diff lists the leaves (dot paths) that differ between two JSON bodies:
// changed, added (Before empty) or removed (After empty), in path order.
func Diff(before, after []byte) []FieldChange {
	a, b := leaves(gjson.ParseBytes(before), ""), leaves(gjson.ParseBytes(after), "")
	paths := make([]string, 0, len(a)+len(b))
	for p := range a {
		paths = append(paths, p)
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var out []FieldChange
	for _, p := range paths {
		if a[p] != b[p] {
			out = append(out, FieldChange{Path: p, Before: a[p], After: b[p]})
		}
	}
	return out
}

// leaves maps each scalar (and each empty object or array) of v to its raw
// JSON, by dot path.
func leaves(v gjson.Result, prefix string) map[string]string {
	out := map[string]string{}
	var walk func(v gjson.Result, path string)
	walk = func(v gjson.Result, path string) {
		if !v.IsObject() && !v.IsArray() || len(v.Array()) == 0 && len(v.Map()) == 0 {
			out[path] = v.Raw
			return
		}
		i := 0
		v.ForEach(func(k, child gjson.Result) bool {
			name := k.String()
			if v.IsArray() {
				name = fmt.Sprint(i)
			}
			i++
			walk(child, strings.TrimPrefix(path+"."+name, "."))
			return true
		})
	}
	walk(v, prefix)
	return out
}
