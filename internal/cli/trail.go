package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/trail"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/ui"
)

// streamMirror writes every entry of this dlqt's journal to the team's
// audit stream (journal.Mirror) and waits for the stream's confirm before
// the entry is committed: what is not on the stream is not in the journal,
// and the action it records does not start. It dials its own connection on
// the first entry, so reading never waits for the stream, and a stream
// that cannot be reached only refuses actions.
type streamMirror struct {
	a      *app
	writer string
	signer ssh.Signer // signs each record (checkpointSigner); nil: unsigned

	mu     sync.Mutex
	live   *broker.Live
	stream *broker.AuditStream
}

// mirrorTo makes j confirm every append on the audit stream, when one is
// configured.
func (a *app) mirrorTo(j *journal.Shared) {
	if a.auditStream == "" {
		return
	}
	if a.trail == nil {
		a.trail = &streamMirror{a: a, writer: trail.Writer(a.host, a.journalPath), signer: a.checkpointSigner()}
	}
	j.SetMirror(a.trail)
}

// Mirror implements journal.Mirror.
func (m *streamMirror) Mirror(e journal.Entry) error {
	body, err := trail.Encode(m.writer, e, m.signer)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ctx := context.Background()
	if m.stream == nil {
		if m.stream, err = m.open(ctx); err != nil {
			// never sent: no copy of it can be on the stream
			return notSent{fmt.Errorf("%w (the trail is offline: no action is taken while the stream cannot confirm it; reading still works)", err)}
		}
	}
	if err := m.stream.Write(ctx, body, fmt.Sprintf("%s#%d", m.writer, e.Seq)); err != nil {
		err = fmt.Errorf("%w (the trail is offline: nothing was done)", err)
		if errors.Is(err, broker.ErrNotSent) {
			return notSent{err}
		}
		return err // it may be on the stream unconfirmed: the next entry names it
	}
	return nil
}

// probe says whether the stream could take an entry now, without writing
// one (AuditStream.Probe), connecting as the first entry would.
func (m *streamMirror) probe(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stream == nil {
		s, err := m.open(ctx)
		if err != nil {
			return err
		}
		m.stream = s
	}
	return m.stream.Probe(ctx)
}

func (m *streamMirror) open(ctx context.Context) (*broker.AuditStream, error) {
	if m.live == nil {
		live, err := m.a.dialQuietly(ctx) // the TUI may own the terminal
		if err != nil {
			return nil, fmt.Errorf("audit stream %q: %w", m.a.auditStream, err)
		}
		m.live = live
	}
	return m.live.OpenAuditStream(ctx, m.a.auditStream, m.a.auditRetention)
}

// closeTrail closes the mirror's connections at exit.
func (a *app) closeTrail() {
	m := a.trail
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stream != nil {
		m.stream.Close()
	}
	if m.live != nil {
		m.live.Close()
	}
}

var maxAge = regexp.MustCompile(`^[0-9]+[YMDhms]$`)

// auditRetention reads audit_retention: max_age as RabbitMQ takes it
// (400D, 12h), max_bytes as a size (20GiB).
func auditRetention(fc fileConfig) (broker.Retention, error) {
	var r broker.Retention
	if age := fc.AuditRetention.MaxAge; age != "" {
		if !maxAge.MatchString(age) {
			return r, fmt.Errorf("audit_retention.max_age %q: want a number and one of Y M D h m s, like 400D", age)
		}
		r.MaxAge = age
	}
	if b := fc.AuditRetention.MaxBytes; b != "" {
		var n byteSize
		if err := n.Set(b); err != nil {
			return r, fmt.Errorf("audit_retention.max_bytes: %w", err)
		}
		r.MaxBytes = int64(n)
	}
	return r, nil
}

// readTrail reads the whole audit stream, in order, and hands each record
// to each and each message that is not a record, as a problem, to bad;
// it keeps none of them, so a trail of a million records costs what its
// callers keep.
func (a *app) readTrail(ctx context.Context, each func(trail.Record) error, bad func(trail.Problem)) error {
	if a.auditStream == "" {
		return usageError{errors.New("no audit stream is configured: set audit_stream in the config (or DLQT_AUDIT_STREAM)")}
	}
	live, err := a.dialQuietly(ctx) // the TUI's proposals screen reads it too
	if err != nil {
		return err
	}
	defer live.Close()
	_, err = live.ReadAuditStream(ctx, a.auditStream, func(offset int64, body []byte) error {
		r, err := trail.Decode(body, offset)
		if err != nil {
			bad(trail.Problem{Offset: offset, What: err.Error()})
			return nil
		}
		return each(r)
	})
	return err
}

// verifyTrail is dlqt journal verify --stream: every writer's chain on the
// audit stream, and each thing wrong named with its offset and writer.
func (a *app) verifyTrail(cmd *cobra.Command) error {
	var v trail.Verifier
	n := 0
	err := a.readTrail(cmd.Context(), func(r trail.Record) error {
		n++
		v.Add(r)
		return nil
	}, func(p trail.Problem) { n++; v.Unreadable(p) })
	if err != nil {
		return err
	}
	chains, problems := v.Result()
	w := cmd.OutOrStdout()
	known, kerr := a.knownKeys()
	if kerr != nil {
		fmt.Fprintf(w, "note: the keys known here could not be read (%v): no writer's key is named\n", kerr)
	}
	fmt.Fprintf(w, "audit stream %s: %s of %s\n", a.auditStream, plural(n, "record"), plural(len(chains), "writer"))
	for _, c := range chains {
		dup := ""
		if c.Duplicates > 0 {
			dup = fmt.Sprintf(" (%s published twice, the same entry: not a fault)", plural(c.Duplicates, "record"))
		}
		if len(c.Replaced) > 0 {
			dup += fmt.Sprintf(" (%s the stream never confirmed, replaced by the writer: not counted, at offset %s)", plural(len(c.Replaced), "attempt"), offsets(c.Replaced))
		}
		key := "unsigned"
		if c.Key != "" {
			key = "signed by " + c.Key + " (" + known.whose(c.Key) + ")"
		}
		fmt.Fprintf(w, "  %s  entries %d-%d, %s%s\n", sanitize.Line(c.Writer), c.First, c.Last, key, dup)
	}
	return reportTrail(w, "audit stream "+a.auditStream, problems)
}

// crossCheckTrail is the part of dlqt journal verify that compares the
// local journal with what the audit stream holds of its writer.
func (a *app) crossCheckTrail(cmd *cobra.Command, local []journal.Entry) error {
	w := cmd.OutOrStdout()
	writer := trail.Writer(a.host, a.journalPath)
	var rs []trail.Record // this writer's: as many as the journal's entries
	err := a.readTrail(cmd.Context(), func(r trail.Record) error {
		if r.Writer == writer {
			rs = append(rs, r)
		}
		return nil
	}, func(trail.Problem) {})
	if err != nil {
		fmt.Fprintf(w, "note: the audit stream %s could not be read (%v): the journal was not cross-checked\n", a.auditStream, err)
		return nil
	}
	problems, unsent := trail.CrossCheck(local, writer, rs)
	if n := len(unsent); n > 0 { // the journal's last entries, in a run
		fmt.Fprintf(w, "note: entries %d-%d (sessions' starts and ends) were written while the trail was offline; they go to the stream before this journal's next entry\n", unsent[0], unsent[n-1])
	}
	if len(problems) == 0 {
		fmt.Fprintf(w, "audit stream %s: the journal matches what the stream holds of %s\n", a.auditStream, sanitize.Line(writer))
		return nil
	}
	return reportTrail(w, a.journalPath+" against audit stream "+a.auditStream, problems)
}

// reportTrail writes one line a problem and fails when there is one.
func reportTrail(w io.Writer, what string, problems []trail.Problem) error {
	for _, p := range problems {
		fmt.Fprintln(w, sanitize.Line(p.String()))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", what, plural(len(problems), "problem"))
	}
	fmt.Fprintf(w, "%s: every writer's chain intact\n", what)
	return nil
}

// exportTrail is dlqt journal export --stream: the stream's records as
// JSONL, in stream order, unreadable ones left out and counted.
func (a *app) exportTrail(cmd *cobra.Command, out string) error {
	w, done, err := exportTarget(cmd.OutOrStdout(), out)
	if err != nil {
		return err
	}
	n, unreadable, err := a.writeTrail(cmd.Context(), w)
	if err = done(err); err != nil {
		return err
	}
	if unreadable > 0 {
		fmt.Fprintf(a.stderr, "dlqt: %s of the audit stream %s are not dlqt records and were left out (dlqt journal verify --stream names them)\n", plural(unreadable, "message"), a.auditStream)
	}
	if out != "" {
		fmt.Fprintf(a.stderr, "dlqt: exported %s of the audit stream %s to %s\n", plural(n, "record"), a.auditStream, out)
	}
	return nil
}

// writeTrail writes the stream's records to w as JSONL, in stream order,
// as they are read; it counts them and the messages that are not records.
func (a *app) writeTrail(ctx context.Context, w io.Writer) (n, unreadable int, err error) {
	enc := json.NewEncoder(w)
	err = a.readTrail(ctx, func(r trail.Record) error {
		n++
		return enc.Encode(r)
	}, func(trail.Problem) { unreadable++ })
	return n, unreadable, err
}

// tuiExportTrail is E on the TUI's team trail: what dlqt journal export
// --stream writes; nil when no stream is configured.
func (a *app) tuiExportTrail() func(w io.Writer) (int, error) {
	if a.auditStream == "" {
		return nil
	}
	return func(w io.Writer) (int, error) {
		n, _, err := a.writeTrail(context.Background(), w)
		return n, err
	}
}

// plural is "1 record", "3 records".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// teamJournal is what proposals, decisions and runs are read from when an
// audit stream is set: this journal's entries from before its writer's
// first record on the stream, then every record on the stream that
// verifies (trail.Verify: a forged, forked or unsigned-where-signed record
// counts for nothing), in stream order. So alice proposes on one host,
// carol approves on another and alice runs on the first. A stream that
// cannot be read is an error, never the local journal alone: a rejection
// made elsewhere must not be missed.
type teamJournal struct {
	approval.Journal
	a *app
}

func (t teamJournal) Path() string {
	return t.Journal.Path() + " or the audit stream " + t.a.auditStream
}

func (t teamJournal) Records() ([]triage.Recorded, error) {
	local, err := t.Journal.Records()
	if err != nil {
		return nil, err
	}
	// Every record is verified; only the workflow's are kept (approval.Fold
	// reads nothing else).
	writer := trail.Writer(t.a.host, t.a.journalPath)
	var (
		v     trail.Verifier
		rs    []trail.Record
		first uint64
	)
	err = t.a.readTrail(context.Background(), func(r trail.Record) error {
		v.Add(r)
		if r.Writer == writer && (first == 0 || r.Entry.Seq < first) {
			first = r.Entry.Seq
		}
		if r.Entry.Action.IsProposal() {
			rs = append(rs, r)
		}
		return nil
	}, v.Unreadable)
	if err != nil {
		return nil, fmt.Errorf("the audit stream %s could not be read, so the proposals and decisions of other hosts cannot be seen: %w", t.a.auditStream, err)
	}
	chains, problems := v.Result()
	rs = trail.Standing(rs, chains, problems)
	out := make([]triage.Recorded, 0, len(local)+len(rs))
	for _, r := range local {
		if first == 0 || r.Seq < first {
			out = append(out, r)
		}
	}
	for _, r := range rs {
		out = append(out, journal.RecordOf(r.Entry))
	}
	return firstProposals(out), nil
}

// firstProposals leaves out of the team's records a proposal whose id was
// proposed before, and a decision or run of a proposal not proposed
// before it. Anyone who may publish to the stream can start a writer of
// their own whose chain verifies: such a record would otherwise replace a
// proposal (and so drop its approval) or make approval.Fold refuse every
// proposal of the team. A decision still counts only with its approver's
// signature (approval.Trusted).
func firstProposals(rs []triage.Recorded) []triage.Recorded {
	proposed := map[string]bool{}
	out := rs[:0]
	for _, r := range rs {
		if r.Action.IsProposal() {
			id, _ := r.Details["proposal_id"].(string)
			if r.Action == triage.ActionProposal {
				p, _ := r.Details["proposal"].(map[string]any)
				if inner, _ := p["id"].(string); id == "" || inner != id || proposed[id] {
					continue
				}
				proposed[id] = true
			} else if !proposed[id] {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// teamTrailRows bounds the records the TUI's team trail keeps: the
// newest, a few MiB, however long the stream's retention.
const teamTrailRows = 20000

// tuiTeamTrail reads the audit stream for the TUI's journal screen; nil
// when no stream is configured.
func (a *app) tuiTeamTrail() func() (ui.TeamTrail, error) {
	if a.auditStream == "" {
		return nil
	}
	return func() (ui.TeamTrail, error) {
		// Every record is verified; the screen keeps the newest
		// teamTrailRows of them.
		var (
			v     trail.Verifier
			ring  = make([]trail.Record, 0, 256)
			n, at int
		)
		err := a.readTrail(context.Background(), func(r trail.Record) error {
			v.Add(r)
			n++
			if len(ring) < teamTrailRows {
				ring = append(ring, r)
			} else {
				ring[at] = r
				at = (at + 1) % teamTrailRows
			}
			return nil
		}, func(p trail.Problem) { n++; v.Unreadable(p) })
		if err != nil {
			return ui.TeamTrail{}, err
		}
		rs := append(ring[at:], ring[:at]...)
		chains, problems := v.Result()
		void := map[int64]string{}
		for _, p := range problems {
			if _, ok := void[p.Offset]; !ok && p.Offset >= 0 {
				void[p.Offset] = p.What
			}
		}
		for _, c := range chains {
			for _, at := range c.Replaced {
				void[at] = "an attempt the stream never confirmed; its writer rolled it back and wrote another in its place"
			}
		}
		t := ui.TeamTrail{Stream: a.auditStream, Entries: make([]ui.TeamEntry, len(rs))}
		for i, r := range rs {
			t.Entries[i] = ui.TeamEntry{Entry: r.Entry, Writer: r.Writer, Offset: r.Offset, Void: void[r.Offset]}
		}
		t.Summary = fmt.Sprintf("%s of %s, every writer's chain intact", plural(n, "record"), plural(len(chains), "writer"))
		if len(rs) < n {
			t.Summary += fmt.Sprintf("; the newest %d shown (dlqt journal export --stream writes all)", len(rs))
		}
		replaced := 0
		for _, c := range chains {
			replaced += len(c.Replaced)
		}
		if replaced > 0 {
			t.Summary += fmt.Sprintf(" (%s the stream never confirmed, replaced: not counted)", plural(replaced, "attempt"))
		}
		if len(problems) > 0 {
			t.Broken = true
			t.Summary = fmt.Sprintf("TRAIL BROKEN: %s (dlqt journal verify --stream names all %d)", problems[0], len(problems))
		}
		return t, nil
	}
}

// offsets lists stream offsets, the first few: 213, 540.
func offsets(at []int64) string {
	const show = 5
	parts := make([]string, 0, show+1)
	for i, o := range at {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(at)-show))
			break
		}
		parts = append(parts, strconv.FormatInt(o, 10))
	}
	return strings.Join(parts, ", ")
}

// notSent is a mirror's error that is also journal.ErrNotSent, with the
// text of the error alone.
type notSent struct{ error }

func (e notSent) Unwrap() []error { return []error{e.error, journal.ErrNotSent} }

// keyNames names the keys known here by fingerprint: the users file's
// people and the dlqt serve key (the one serverKey finds).
type keyNames map[string]string

// knownKeys are the keys verify --stream names each writer's key by:
// a chain's key is the one its first record names, and only a key known
// here says whose the chain is.
func (a *app) knownKeys() (keyNames, error) {
	names := keyNames{}
	us, err := a.knownUsers()
	if err != nil {
		return names, err
	}
	if us != nil {
		for _, pk := range personKeys(us) {
			names[ssh.FingerprintSHA256(pk.Key)] = sanitize.Line(pk.Person) + "'s key in the users file"
		}
	}
	server, err := a.serverKey()
	if err != nil {
		return names, err
	}
	switch {
	case server == nil:
	case a.hostSigner != nil:
		names[ssh.FingerprintSHA256(server)] = "this dlqt serve's host key"
	case a.serverKeyFile != "":
		names[ssh.FingerprintSHA256(server)] = "the dlqt serve key of server_key"
	default: // the key this user's own dlqt signs with on this host
		names[ssh.FingerprintSHA256(server)] = "this user's dlqt key on this host"
	}
	return names, nil
}

func (k keyNames) whose(fingerprint string) string {
	if name, ok := k[fingerprint]; ok {
		return name
	}
	return "a key not known here: compare it with the keys you know"
}
