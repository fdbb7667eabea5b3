package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/connect"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/serve"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/filter"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/views"
)

// app holds what the flags, the environment and the config file decided.
// Precedence: flag, then DLQT_* environment variable, then config file,
// then the default.
type app struct {
	assets Assets    // what the binary embeds
	stderr io.Writer // progress, notes and notices; stdout is for results

	amqpURL, mgmtURL, vhost  string
	journalPath, actor, host string
	configPath               string
	context                  string                   // --context, DLQT_CONTEXT or current_context; "" is none
	contexts                 map[string]brokerContext // the config file's, for the TUI's switcher

	// How the broker is reached (connection.go): TLS, who logs in and the
	// secret's source, the timeout per node. prompted keeps the passwords
	// a prompt was given, by user.
	cflags         connFlags
	tls, mgmtTLS   connect.TLS
	auth           connect.Auth
	connectTimeout time.Duration
	prompted       map[string]string
	stdin          *os.File // where a password prompt reads; nil is os.Stdin

	snapshotPath string   // --snapshot: read a snapshot file instead of a broker
	demo         bool     // --demo: the bundled demo snapshot
	demoFallback bool     // --demo-fallback: the demo when no broker answers (make run)
	queue        string   // --queue: open the TUI on this queue's groups
	limit        int      // --limit: browse bound
	limitSet     bool     // --limit or browse_limit given: streamed reads stop there too
	acceptCost   bool     // --accept-delivery-cost
	memBudget    byteSize // --memory-budget
	memBudgetSet bool     // given: the TUI's index keeps to it too
	keepSpill    bool     // --keep: leave the TUI's spill files

	patterns    []string
	appFrames   []string // config app_frames: the operator's packages in stack traces
	replayAllow []string // replay.allow from the config file
	keymap      []byte   // user keymap overrides from the config file

	red        *redact.Redactor // the defaults plus the config's redaction rules
	tenantPath string           // filters.tenant_path
	traceURL   triage.TraceURL  // trace_url, the context's over the top level's
	// auditStream is the team's audit stream (DLQT_AUDIT_STREAM, config
	// audit_stream; "" none) and trail the mirror that writes it.
	auditStream    string
	auditRetention broker.Retention
	trail          *streamMirror
	// readOnly (--read-only, DLQT_READ_ONLY, read_only) refuses every
	// command that changes a queue; the TUI drops discard, replay and reveal.
	readOnly bool
	health   views.HealthThresholds // the TUI's queue health thresholds

	owners      approval.Owners // owners: which team owns which messages
	policy      approval.Policy // approvals: the actions that need a second person
	expireAfter time.Duration   // approvals.expire_after: how long a proposal waits
	usersFile   string          // --users-file: who may propose and approve, with their keys
	keyFile     string          // --key: the SSH private key that signs proposals and decisions
	// serverKeyFile (DLQT_SERVER_KEY, config server_key) is the public key
	// of the dlqt serve that signs its sessions' decisions and the journal's
	// checkpoint; hostSigner is that key's private half, in the server.
	serverKeyFile string
	hostSigner    ssh.Signer
	// session is set in the app of one `dlqt serve` SSH session: who is
	// connected, with the server's settings and journal (serve_session.go).
	session *sshSession
	// beforeChange journals what a discard or replay carries out (dlqt
	// run's proposal) once it is about to touch a queue (changing).
	beforeChange func() error
}

// changing is called once a discard or replay reached the broker and is
// about to change a queue: a run spends its approval there, never on an
// attempt that did nothing.
func (a *app) changing() error {
	f := a.beforeChange
	a.beforeChange = nil
	if f == nil {
		return nil
	}
	return f()
}

func (a *app) bindFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.amqpURL, "amqp-url", "", "AMQP URL of the broker, or a comma-separated list of cluster nodes (env DLQT_AMQP_URL; default "+broker.DefaultAMQPURL+")")
	f.StringVar(&a.mgmtURL, "mgmt-url", "", "management API URL, or a comma-separated list of cluster nodes (env DLQT_MGMT_URL; default "+broker.DefaultMgmtURL+", credentials from the AMQP URL)")
	f.StringVar(&a.vhost, "vhost", "", `vhost to work in (env DLQT_VHOST; default "/")`)
	f.StringVar(&a.journalPath, "journal", "", "journal file (env DLQT_JOURNAL; default "+defaultJournalPath()+")")
	f.StringVar(&a.actor, "actor", "", "who is acting, for the journal (env DLQT_ACTOR; default login@host; with --key of the users file, its user)")
	f.StringVar(&a.context, "context", "", "named broker context of the config file (env DLQT_CONTEXT; config current_context; dlqt contexts lists them)")
	f.StringVar(&a.configPath, "config", "", "YAML config file (env DLQT_CONFIG; default "+defaultConfigPath()+")")
	f.StringVar(&a.snapshotPath, "snapshot", "", "read this snapshot file instead of a broker")
	f.BoolVar(&a.demo, "demo", false, "open the bundled demo snapshot (no broker needed)")
	f.IntVar(&a.limit, "limit", 0, fmt.Sprintf("browse at most this many messages per queue (default: the TUI, groups, messages --json, replay and discard read the whole queue, as much of it as the broker's memory headroom allows; elsewhere %d)", triage.DefaultBrowseLimit))
	a.memBudget = byteSize(triage.DefaultMemoryBudget)
	f.Var(&a.memBudget, "memory-budget", "memory a read may spend on messages (e.g. 64MiB, 1GiB): what the broker may push ahead of a streamed read, and how many messages' index entries (about 1 KiB each) the TUI and the plan of a replay or discard keep (unset: 128MiB there, about 130,000 messages); a read it cuts short says so, and a replay or discard of a group so cut exits 4; a replay refuses, before it holds anything, a message larger than a budget given here")
	f.BoolVar(&a.acceptCost, "accept-delivery-cost", false, "browse quorum queues with a delivery limit even though each read counts as a delivery (from RabbitMQ 4.0 every quorum queue has one, 20 by default; on 4.3 a read no longer counts), and let a replay hold messages with no delivery left, which a lost hold would drop")
	f.StringVar(&a.usersFile, "users-file", "", "users file naming people, roles, keys and the teams they approve for (env DLQT_USERS_FILE; config users_file)")
	f.StringVar(&a.keyFile, "key", "", "SSH private key (unencrypted) that signs proposals, approvals and rejections (env DLQT_KEY; config key)")
	f.BoolVar(&a.readOnly, "read-only", false, "refuse discard and replay, and hide them and reveal in the TUI (env DLQT_READ_ONLY; config read_only)")
	a.bindConnFlags(root)
	root.Flags().StringVar(&a.queue, "queue", "", "open straight on this queue's groups")
	root.Flags().BoolVar(&a.keepSpill, "keep", false, "keep the TUI's spill files (each read's messages, whole, in the cache directory) and print their paths on exit")
	root.Flags().BoolVar(&a.demoFallback, "demo-fallback", false, "when no broker answers, say so and open the demo snapshot")
}

// resolve applies the environment and the config file under the flags.
func (a *app) resolve(cmd *cobra.Command) error {
	a.memBudgetSet = cmd.Flags().Changed("memory-budget")
	if a.session != nil {
		return a.resolveSession(cmd)
	}
	pick := func(flagVal, env, fileVal, def string) string {
		for _, v := range []string{flagVal, os.Getenv(env), fileVal, def} {
			if v != "" {
				return v
			}
		}
		return ""
	}
	explicit := a.configPath != "" || os.Getenv("DLQT_CONFIG") != ""
	a.configPath = pick(a.configPath, "DLQT_CONFIG", "", defaultConfigPath())
	fc, err := loadFileConfig(a.configPath, explicit)
	if err != nil {
		return usageError{err}
	}
	a.contexts = fc.Contexts
	if a.context, err = chooseContext(a.context, &fc, a.configPath); err != nil {
		return usageError{err}
	}
	actor, host := defaultActor()
	a.host = host
	a.amqpURL = pick(a.amqpURL, "DLQT_AMQP_URL", fc.AMQPURL, broker.DefaultAMQPURL)
	a.mgmtURL = pick(a.mgmtURL, "DLQT_MGMT_URL", fc.MgmtURL, broker.DefaultMgmtURL)
	a.vhost = pick(a.vhost, "DLQT_VHOST", fc.Vhost, "") // "": the AMQP URL's path, else "/" (connect)
	if err := a.resolveConn(cmd, fc.connSettings, false); err != nil {
		return err
	}
	if a.vhost == "" {
		a.vhost = urlVhostOr(a.amqpURL, "/")
	}
	a.journalPath = pick(a.journalPath, "DLQT_JOURNAL", fc.Journal, defaultJournalPath())
	a.auditStream = pick("", "DLQT_AUDIT_STREAM", fc.AuditStream, "")
	if a.auditRetention, err = auditRetention(fc); err != nil {
		return usageError{fmt.Errorf("config %s: %w", a.configPath, err)}
	}
	a.actor = pick(a.actor, "DLQT_ACTOR", fc.Actor, actor)
	if err := a.resolveLimit(fc.BrowseLimit); err != nil {
		return err
	}
	a.patterns = fc.ParkingPatterns
	a.appFrames = fc.AppFrames
	a.replayAllow = fc.Replay.Allow
	if a.keymap, err = fc.keymapYAML(); err != nil {
		return usageError{fmt.Errorf("config %s: keymap: %w", a.configPath, err)}
	}
	if a.demo && a.snapshotPath != "" {
		return usageError{errors.New("--demo and --snapshot both name a snapshot: pick one")}
	}
	if a.red, err = fc.Redaction.redactor(); err != nil {
		return usageError{fmt.Errorf("config %s: %w", a.configPath, err)}
	}
	a.tenantPath = fc.Filters.TenantPath
	if a.traceURL, err = triage.ParseTraceURL(fc.TraceURL); err != nil {
		return usageError{fmt.Errorf("config %s: %w", a.configPath, err)}
	}
	a.health = fc.Health
	if a.owners, err = ownerRules(a.configPath, fc.Owners); err != nil {
		return usageError{err}
	}
	a.policy, a.expireAfter = fc.Approvals.policy, fc.Approvals.expireAfter
	a.usersFile = pick(a.usersFile, "DLQT_USERS_FILE", fc.UsersFile, "")
	a.keyFile = pick(a.keyFile, "DLQT_KEY", fc.Key, "")
	a.serverKeyFile = pick("", "DLQT_SERVER_KEY", fc.ServerKey, "")
	a.actAsKeyUser() // the CLI journals as the TUI does; a key naming nobody is for the approvals to refuse
	if a.expireAfter == 0 {
		a.expireAfter = approval.DefaultExpiry
	}
	if a.tenantPath != "" {
		if _, err := redact.ParseJSONPath(a.tenantPath); err != nil {
			return usageError{fmt.Errorf("config %s: filters.tenant_path: %w", a.configPath, err)}
		}
	}
	return a.resolveReadOnly(cmd, fc.ReadOnly)
}

// resolveLimit takes --limit, else the config file's browse_limit, else
// the default; limitSet says whether the user chose one.
func (a *app) resolveLimit(fromFile int) error {
	if a.limit < 0 {
		return usageError{fmt.Errorf("--limit must be positive, got %d", a.limit)}
	}
	if a.limit == 0 {
		a.limit = fromFile
	}
	a.limitSet = a.limit != 0
	if a.limit == 0 {
		a.limit = triage.DefaultBrowseLimit
	}
	return nil
}

// resolveReadOnly settles read-only mode and refuses, before anything is
// touched, a command that would change a queue under it.
func (a *app) resolveReadOnly(cmd *cobra.Command, fromFile bool) error {
	var err error
	if a.readOnly, err = readOnlySetting(cmd, a.readOnly, fromFile); err != nil {
		return usageError{err}
	}
	if a.readOnly && changesQueues(cmd) {
		return usageError{fmt.Errorf("%s refused: read-only mode (%s) allows no change to a queue; nothing was touched", cmd.Name(), a.readOnlySource(cmd, fromFile))}
	}
	return nil
}

// changesQueues names the commands that take messages out of a queue.
// Journal export and verify only read, so read-only mode allows them.
func changesQueues(cmd *cobra.Command) bool {
	switch cmd.CommandPath() {
	case "dlqt discard", "dlqt replay", "dlqt quarantine", "dlqt run", "dlqt fullscan":
		return true
	}
	return false
}

// readOnlySetting is --read-only when given, else DLQT_READ_ONLY, else the
// config file's read_only.
func readOnlySetting(cmd *cobra.Command, flag, file bool) (bool, error) {
	if f := cmd.Flags().Lookup("read-only"); f != nil && f.Changed {
		return flag, nil
	}
	if v, ok := os.LookupEnv("DLQT_READ_ONLY"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("DLQT_READ_ONLY=%q: want true or false", v)
		}
		return b, nil
	}
	return file, nil
}

// readOnlySource says which setting made dlqt read-only, so the refusal
// tells the user what to change.
func (a *app) readOnlySource(cmd *cobra.Command, file bool) string {
	if f := cmd.Flags().Lookup("read-only"); f != nil && f.Changed {
		return "--read-only"
	}
	if os.Getenv("DLQT_READ_ONLY") != "" {
		return "DLQT_READ_ONLY"
	}
	if a.context != "" {
		return "read_only in " + a.configPath + ", context " + a.context
	}
	return "read_only in " + a.configPath
}

// ReadOnly reports whether discard, replay and reveal are refused; the TUI
// leaves them out of its keymap.
func (a *app) ReadOnly() bool { return a.readOnly }

// redactor is the configured redactor, for every place that shows a
// payload or headers (the headless commands and the TUI).
func (a *app) redactor() *redact.Redactor {
	if a.red == nil {
		return redact.New()
	}
	return a.red
}

// filterOptions are what --where and the TUI's filter bar parse with.
func (a *app) filterOptions() filter.Options {
	return filter.Options{TenantPath: a.tenantPath, Redactor: a.redactor()}
}

// parseWhere reads --where expressions; a bad one is a usage error.
func (a *app) parseWhere(exprs []string) (filter.Filter, error) {
	f, err := filter.ParseWhere(exprs, a.filterOptions())
	if err != nil {
		return f, usageError{fmt.Errorf("--where %w", err)}
	}
	return f, nil
}

// openReader returns the source to read: a snapshot file, the demo, or the
// live broker. close releases it.
func (a *app) openReader(ctx context.Context) (r triage.Reader, close func(), err error) {
	switch {
	case a.demo:
		s, err := a.openDemo()
		return s, func() {}, err
	case a.snapshotPath != "":
		s, err := broker.OpenSnapshot(a.snapshotPath)
		if err == nil {
			s.UseAppFrames(a.appFrames)
		}
		return s, func() {}, err
	}
	live, err := a.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	return live, func() { live.Close() }, nil
}

// browseOptions are the bound and the delivery-cost consent from the flags.
func (a *app) browseOptions() triage.BrowseOptions {
	return triage.BrowseOptions{Limit: a.limit, AcceptDeliveryCost: a.acceptCost, MemoryBudget: int64(a.memBudget)}
}

// openJournal opens the journal; the TUI still runs without one and says why.
// It is held only while an entry is read or written, so `dlqt journal
// export` and `verify` work beside a running TUI or a long replay; every
// entry this process writes names the build and the context.
func (a *app) openJournal() (*sessionJournal, error) {
	if a.session != nil { // under dlqt serve: the server's journal, with the session's key and address
		return &sessionJournal{Shared: a.session.journal, details: a.connDetails(a.session.Details()), checkpoint: a.hostSigner}, nil
	}
	j, err := journal.OpenShared(a.journalPath, 2*time.Second, journal.Stamp{Version: buildVersion(), Context: a.context})
	if err != nil {
		return nil, err
	}
	if err := a.checkCheckpointToAct(j); err != nil {
		j.Close()
		return nil, err
	}
	a.mirrorTo(j)
	return &sessionJournal{Shared: j, details: a.connDetails(nil), checkpoint: a.checkpointSigner()}, nil
}

// checkpointSigner is the key that signs the journal's checkpoint: the
// server's host key in dlqt serve, else this user's default host key (the
// one dlqt serve would use; made here if there is none yet), so a plain
// local journal is anchored too. nil when there is no such key to be had.
func (a *app) checkpointSigner() ssh.Signer {
	if a.hostSigner != nil {
		return a.hostSigner
	}
	s, err := serve.HostSigner(defaultHostKeyPath())
	if err != nil {
		return nil
	}
	return s
}

// openForChange opens the journal, then dials the broker: a locked journal
// must stop a discard or a replay before any message is held. The recorder
// journals as the configured actor; done closes both.
func (a *app) openForChange(ctx context.Context) (rec *journal.Recorder, live *broker.Live, done func(), err error) {
	j, err := a.openJournal()
	if err != nil {
		return nil, nil, nil, err
	}
	live, err = a.dial(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	return journal.NewRecorder(j, a.actor, a.host), live, func() { live.Close() }, nil
}

// dial connects to the live broker. When nothing seemed to answer, the
// error names which of AMQP and the management API did not; the dial
// error stays in the chain (brokerUnreachable reads it).
func (a *app) dial(ctx context.Context) (*broker.Live, error) { return a.dialShowing(ctx, true) }

// dialQuietly is dial without the "connecting to …" line: for a
// connection made while the TUI owns the terminal (the audit stream's),
// where that line would be drawn over the screen.
func (a *app) dialQuietly(ctx context.Context) (*broker.Live, error) {
	return a.dialShowing(ctx, false)
}

func (a *app) dialShowing(ctx context.Context, progress bool) (*broker.Live, error) {
	cc, err := a.brokerConfig().Connect() // asks for a password, if one must be asked, before anything is shown
	if err != nil {
		return nil, err
	}
	done := func() {}
	if progress {
		done = a.connecting(ctx, cc.Nodes()[0].Addr)
	}
	live, err := broker.DialConn(ctx, cc)
	done()
	if err == nil {
		live.ActAs(a.actor) // the name its leases show to whoever else wants the queue
		live.UseAppFrames(a.appFrames)
	}
	if err != nil && brokerUnreachable(err) {
		if which := unanswered(a.amqpURL, a.mgmtURL); which != "" {
			return nil, fmt.Errorf("%s: %w", which, err)
		}
	}
	return live, err
}

// redactedURL hides the passwords of a URL or a list of node URLs for
// messages; a URL that does not parse is shown with its password hidden.
func redactedURL(raw string) string {
	nodes := connect.SplitNodes(raw)
	for i, n := range nodes {
		nodes[i] = connect.Redact(n)
	}
	return strings.Join(nodes, ",")
}

// brokerUnreachable tells "nothing answers" (fall back to the demo) from
// "something answered and said no" (bad credentials, missing vhost), which
// must never be papered over with demo data. The broker package keeps the
// dial error under its one-line explanation, so this reads the error chain,
// never the text.
func brokerUnreachable(err error) bool {
	var netErr *net.OpError
	if errors.As(err, &netErr) && netErr.Op == "remote error" {
		return false // a TLS alert: the broker answered and refused
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &netErr)
}

// takeLease takes queue's lease (broker/lease.go) for a replay before it
// is planned, so a second actor is refused with who holds it before it
// reads anything, and a user without the permissions a replay needs is
// refused before that; the broker connection it dials is only for the lease.
func (a *app) takeLease(ctx context.Context, queue, doing string) (*broker.Lease, error) {
	live, err := a.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer live.Close()
	top, err := live.Topology(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.refuseWithoutPermission(ctx, live, top, "replay", broker.FeatureReplay); err != nil {
		return nil, err
	}
	return live.TakeLease(ctx, queue, doing)
}
