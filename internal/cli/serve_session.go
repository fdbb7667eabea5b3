package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/serve"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/ui"
	"github.com/dlqt/dlqt/internal/views"
)

// sshSession is one `dlqt serve` connection as the commands see it: the
// person, and the server's resolved settings and journal.
type sshSession struct {
	serve.Session
	server  *app
	journal *journal.Shared
	// users are the server's users as they are now (re-read on SIGHUP):
	// who may propose, approve and run. Nil outside a server (tests).
	users func() *access.Users
}

// sessionJournal is the journal one process or session writes to. Under
// `dlqt serve` every session shares the server's Shared (one flock holder,
// so sessions never time out on each other's lock) and every entry carries
// the session's key fingerprint and client address.
type sessionJournal struct {
	*journal.Shared
	details map[string]any
	// checkpoint signs the head after each append (nil: this dlqt has no
	// key to sign with, and the checkpoint stays as the last signer left it).
	checkpoint ssh.Signer
}

// Append adds the session's details; they win over a record's own keys of
// the same name, so nothing a session does can claim another key.
func (j *sessionJournal) Append(e journal.Entry) (journal.Entry, error) {
	if len(j.details) > 0 {
		d := maps.Clone(e.Details)
		if d == nil {
			d = map[string]any{}
		}
		maps.Copy(d, j.details)
		e.Details = d
	}
	out, err := j.Shared.Append(e)
	if err == nil && j.checkpoint != nil {
		// a checkpoint that could not be written is not a lost entry:
		// verify says the entries after the last one are not covered
		_ = journal.WriteCheckpoint(j.Path(), out, j.checkpoint)
	}
	return out, err
}

// sessionApp is the app of one session: the server's settings, acting as
// the session's user.
func (a *app) sessionApp(s *sshSession, stderr io.Writer) *app {
	sa := *a
	sa.stderr, sa.session = stderr, s
	sa.actor = s.User.Name
	sa.contexts, sa.queue = nil, ""
	sa.keyFile = "" // the session's key is the identity; the server's never signs for it
	if s.User.Role != access.Operator {
		sa.readOnly = true
	}
	return &sa
}

// serverOwned are the flags a session may not set: they choose the broker,
// its credentials, the journal, the actor and files on the server.
//
// users-file, key and signature are the approval workflow's: in a session
// the server's users file says who is who and the session's key is the
// identity, so nothing names another file or key, nor reads a signature
// from the server's disk (or its stdin).
var serverOwned = []string{"amqp-url", "mgmt-url", "vhost", "journal", "actor", "context", "config", "snapshot", "demo", "queue", "demo-fallback",
	"users-file", "key", "signature"}

// userNow is the session's user as the users file in force names their
// key now: a reload may have removed it or changed their role and teams
// since the session began.
func (s *sshSession) userNow() (*access.User, error) {
	if s.users == nil {
		return s.User, nil
	}
	u, ok := s.users().ByFingerprint(s.Fingerprint)
	if !ok {
		return nil, fmt.Errorf("%s's key %s is no longer in the server's users file", s.User.Name, s.Fingerprint)
	}
	return u, nil
}

// operatorNow is userNow for an action that needs an operator.
func (s *sshSession) operatorNow() (*access.User, error) {
	u, err := s.userNow()
	if err == nil && !u.Role.MayAct() {
		err = fmt.Errorf("%s is now a %s (the users file was reloaded)", u.Name, u.Role)
	}
	return u, err
}

// sessionCommands are what a session may run headless; the others write
// or read files on the server (snapshot, quarantine), or are the server's.
var sessionCommands = []string{
	"dlqt queues", "dlqt groups", "dlqt messages", "dlqt discard", "dlqt replay", "dlqt doctor",
	"dlqt journal export", "dlqt journal verify",
	"dlqt proposals", "dlqt approve", "dlqt reject", "dlqt run", "dlqt edit",
}

// operatorOnly names the commands a viewer may not run in a session: those
// that change a queue, and those of the approval workflow that act (an
// edit's revision is replayed; an approval lets a change go ahead).
func operatorOnly(cmd *cobra.Command) bool {
	switch cmd.CommandPath() {
	case "dlqt edit", "dlqt approve", "dlqt reject":
		return true
	}
	return changesQueues(cmd)
}

// resolveSession checks a headless command of a session and takes the
// server's settings; what the user may choose (--limit, the command's own
// flags) stays theirs.
func (a *app) resolveSession(cmd *cobra.Command) error {
	if !slices.Contains(sessionCommands, cmd.CommandPath()) {
		return usageError{fmt.Errorf("%s is not available over SSH (available: queues, groups, messages, discard, replay, doctor, journal export, journal verify, proposals, approve, reject, run, edit)", cmd.CommandPath())}
	}
	for _, name := range append(slices.Clone(serverOwned), "out", "file") {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return usageError{fmt.Errorf("--%s is not available over SSH: the server chooses it", name)}
		}
	}
	s, limit, acceptCost, readOnly := a.session, a.limit, a.acceptCost, a.readOnly
	*a = *s.server.sessionApp(s, a.stderr)
	if cmd.Flags().Changed("limit") {
		a.limit = limit
	}
	a.acceptCost = a.acceptCost || acceptCost
	a.readOnly = a.readOnly || readOnly // --read-only may only restrict
	u, err := s.userNow()
	if err != nil {
		return usageError{fmt.Errorf("%s refused: %w; nothing was touched", cmd.Name(), err)}
	}
	switch {
	case operatorOnly(cmd) && u.Role != access.Operator:
		return usageError{fmt.Errorf("%s refused: %s is a %s; discard and replay (and edit, approve, reject, run) need an operator; nothing was touched", cmd.Name(), u.Name, u.Role)}
	case changesQueues(cmd) && a.readOnly:
		return usageError{fmt.Errorf("%s refused: read-only mode (of the server, or --read-only) allows no change to a queue; nothing was touched", cmd.Name())}
	}
	return nil
}

// serveRunner runs the sessions of `dlqt serve` on the server's app.
type serveRunner struct {
	a       *app
	keys    ui.KeyMap
	journal *journal.Shared
	users   func() *access.Users // the server's users in force (serve.Server.Users)
}

func (r *serveRunner) session(s serve.Session) *sshSession {
	return &sshSession{Session: s, server: r.a, journal: r.journal, users: r.users}
}

// TUI opens the session's own broker connection and TUI, as the user.
func (r *serveRunner) TUI(ctx context.Context, s serve.Session) (serve.TUI, error) {
	sa := r.a.sessionApp(r.session(s), io.Discard)
	opts, closeReader, err := sa.tuiOptions(ctx, r.keys)
	if err != nil {
		return serve.TUI{}, err
	}
	opts.Role = string(s.User.Role)
	if s.User.Role != access.Operator {
		opts.Actions, opts.ActionsOff = nil, s.User.Name+" is a viewer: discard, replay and reveal need an operator"
	}
	opts.MayActNow = func() error { _, err := r.session(s).operatorNow(); return err }
	t := ui.NewSession(ctx, opts)
	return serve.TUI{Model: t.Model, Acting: t.Acting, Stop: func() { t.Stop(); closeReader() }}, nil
}

// Exec runs a headless command as the session's user, with its exit code.
func (r *serveRunner) Exec(ctx context.Context, s serve.Session, stdout, stderr io.Writer) int {
	root := rootCommandOf(&app{assets: r.a.assets, stderr: stderr, session: r.session(s)})
	root.SetArgs(s.Command)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "dlqt:", err)
	}
	return exitCode(err)
}

// Journal records a session's start or end under its user's name.
func (r *serveRunner) Journal(s serve.Session, start bool) error {
	action, reason := triage.ActionSessionEnd, "disconnected"
	if start {
		action, reason = triage.ActionSessionStart, "connected"
		if len(s.Command) > 0 {
			reason = "connected to run a command"
		}
	}
	d := s.Details()
	d["role"] = string(s.User.Role)
	if len(s.Command) > 0 {
		d["command"] = recordedCommand(s.Command, r.a.redactor())
	}
	j := &sessionJournal{Shared: r.journal, details: d, checkpoint: r.a.hostSigner}
	_, err := j.Append(journal.Entry{Actor: s.User.Name, Host: r.a.host, Action: action, Vhost: r.a.vhost, Reason: reason})
	return err
}

// What the journal keeps of a session's command: the client chose every
// byte of it, and an entry is kept and hashed for as long as the journal.
const (
	maxRecordedArgs    = 32
	maxRecordedArg     = 256  // bytes of one argument
	maxRecordedCommand = 2048 // bytes of all of them
)

// recordedCommand is a session's command as the journal records it: each
// argument redacted and sanitised (triage.ShownClipped), the one after a
// flag named like a secret (--password, --token) masked whole, each clipped
// to maxRecordedArg, and no more than maxRecordedArgs or
// maxRecordedCommand bytes in all; a last element says what was left out.
func recordedCommand(args []string, red *redact.Redactor) []string {
	out := make([]string, 0, min(len(args), maxRecordedArgs)+1)
	size, secretNext := 0, false
	for i, arg := range args {
		if i == maxRecordedArgs || size >= maxRecordedCommand {
			return append(out, leftOut(args[i:]))
		}
		shown, _ := triage.ShownClipped(red, arg, min(maxRecordedArg, maxRecordedCommand-size))
		if secretNext && shown != "" {
			shown = "[REDACTED]"
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		secretFlag := strings.HasPrefix(arg, "-") && red.SecretKey(name)
		if secretFlag && hasValue && value != "" {
			shown = arg[:len(arg)-len(value)] + "[REDACTED]"
		}
		secretNext = secretFlag && !hasValue
		out = append(out, shown)
		size += len(shown)
	}
	return out
}

// leftOut says how many arguments, of how many bytes, were not recorded.
func leftOut(rest []string) string {
	n := 0
	for _, a := range rest {
		n += len(a)
	}
	return fmt.Sprintf("… %s (%d bytes) not recorded", views.Plural(len(rest), "more argument"), n)
}

// sessionActsIn refuses, in a session, to act on what (a proposal, a
// replay to resume) in a vhost other than the server's: the server is bound
// to its vhost, and its sessions act there only.
func (a *app) sessionActsIn(what, vhost string) error {
	if a.session == nil || vhost == a.vhost {
		return nil
	}
	return usageError{fmt.Errorf("%s is in vhost %s; this server acts in vhost %s only: nothing was done", what, vhost, a.vhost)}
}
