package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// replayFlags are the headless replay's command line.
type replayFlags struct {
	ids        []string
	group      string
	to         string
	rate       float64
	canary     int
	canaryRate float64
	observe    time.Duration
	baseline   time.Duration
	maxBacklog int
	yes        bool
	dryRun     bool
	resume     string
	where      []string
	asJSON     bool
	// approved: this replay carries out an approved proposal (dlqt run),
	// so the approvals policy does not turn it into a proposal again.
	approved bool
	// bodies: the body SHA-256 of each id the approved proposal names; a
	// message held with another body is left where it is.
	bodies  map[string]string
	orderBy string // --order-by: the aggregate's path in the payload (or headers.NAME)
	inOrder bool   // --in-order: one message per aggregate at a time, in order
}

func (a *app) replayCommand() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay QUEUE (--id ID ... | --group REASON[/CODE] | --where EXPR ...) [--to EXCHANGE:ROUTING_KEY] [--yes]",
		Short: "Send parked messages back to their route: a canary first, observed, then paced",
		Long: `replay publishes the selected messages of QUEUE to their original route (the
first death's exchange and routing key, or x-original-exchange/-routingKey for
messages an application parked), or to --to, which must match replay.allow in
the config file unless it is the messages' own route. The empty exchange is
written :ROUTING_KEY.

Without --yes (or with --dry-run) nothing changes: the plan is printed.
With --yes: a canary of --canary messages at --canary-rate (1 msg/s), then --observe of
watching (did any fail again into a parking queue? was any returned or
nacked? did the destination backlog grow past --max-backlog? did a
destination dead-letter messages of its own faster than during the
--baseline counted before the canary?), then the rest at --rate. A tripped threshold stops it, says why and exits non-zero; what
was not published stays in QUEUE. A source message is acked only after its
copy is confirmed at the destination.

dlqt replay --resume REPLAY_ID finishes a replay that was interrupted (crash,
kill): nothing is lost, but a message published just before the
interruption may be delivered twice.

--json prints the plan as one JSON object (replay_id, vhost, queue,
selection, count, ids, missing, destinations with their queues and whether
each is allowed, unroutable, problems, options) and changes nothing; the
exit status is that of the plan, non-zero when it may not run.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, gated := a.policy[approval.GateReplay]
			if f.asJSON && f.yes && !f.dryRun && !gated {
				return usageError{errors.New("--json prints the plan only: check it, then run without --json and with --yes")}
			}
			if f.resume != "" {
				if f.asJSON {
					return usageError{errors.New("--json prints a new plan: --resume takes the journal's")}
				}
				if len(args) > 0 || len(f.ids) > 0 || f.group != "" || len(f.where) > 0 {
					return usageError{errors.New("--resume REPLAY_ID takes no QUEUE, --id, --group or --where: the journal has the plan")}
				}
				return a.resumeReplay(cmd, f)
			}
			if len(args) != 1 {
				return usageError{fmt.Errorf("expected one QUEUE, got %d argument(s)", len(args))}
			}
			return a.replay(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.ids, "id", nil, "message id to replay (repeatable)")
	fl.StringVar(&f.group, "group", "", "replay a group: REASON, REASON/CODE, or REASON/ for no code")
	fl.StringVar(&f.to, "to", "", "destination EXCHANGE:ROUTING_KEY instead of each message's original route")
	fl.Float64Var(&f.rate, "rate", replay.DefaultRate, "ceiling in messages per second")
	fl.IntVar(&f.canary, "canary", replay.DefaultCanary, "messages in the canary")
	fl.Float64Var(&f.canaryRate, "canary-rate", replay.DefaultCanaryRate, "messages per second during the canary (at most --rate)")
	fl.DurationVar(&f.observe, "observe", replay.DefaultObserve, "how long to watch the canary")
	fl.DurationVar(&f.baseline, "baseline", replay.DefaultBaseline, "before the canary, count the destination's own dead letters this long from the start (the hold's read counts): only those above that rate stop the replay as collateral")
	fl.IntVar(&f.maxBacklog, "max-backlog", 0, "stop when the destination queues grow by more than this many messages (0: no limit)")
	fl.BoolVar(&f.yes, "yes", false, "replay for real (without it the plan is only printed)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing, even with --yes")
	fl.StringVar(&f.resume, "resume", "", "finish the interrupted replay REPLAY_ID")
	fl.BoolVar(&f.asJSON, "json", false, "print the plan as JSON and change nothing")
	fl.StringVar(&f.orderBy, "order-by", "", "with --in-order: the aggregate of a message, a payload path (order_id, data.order.id) or headers.NAME")
	fl.BoolVar(&f.inOrder, "in-order", false, "replay each aggregate's messages one at a time in their original order (death time, then position); an aggregate that fails again stops, the others go on")
	whereFlag(cmd, &f.where) // narrows --group, or alone selects; see discard
	return cmd
}

func (f replayFlags) options(allow []string) (replay.Options, error) {
	o := replay.Options{Rate: f.rate, Canary: f.canary, CanaryRate: f.canaryRate, Observe: f.observe, Baseline: f.baseline, MaxBacklog: f.maxBacklog, Allow: allow, AutoRamp: true}
	switch {
	case !replay.UsableRate(f.rate):
		return o, usageError{fmt.Errorf("--rate must be a positive number of messages per second, got %g", f.rate)}
	case f.canary <= 0:
		return o, usageError{fmt.Errorf("--canary must be at least 1, got %d", f.canary)}
	case !replay.UsableRate(f.canaryRate):
		return o, usageError{fmt.Errorf("--canary-rate must be a positive number of messages per second, got %g", f.canaryRate)}
	case f.observe <= 0:
		// Zero is refused rather than taken as "no watch": a canary nobody
		// watches checks nothing (a copy that fails again comes back after
		// its publish), and the TUI refuses it too.
		return o, usageError{fmt.Errorf("--observe must be positive, got %s: the canary is watched that long for copies that fail again (e.g. 10s)", f.observe)}
	case f.baseline < 0:
		return o, usageError{fmt.Errorf("--baseline must not be negative, got %s", f.baseline)}
	case f.maxBacklog < 0:
		return o, usageError{fmt.Errorf("--max-backlog must not be negative, got %d", f.maxBacklog)}
	}
	if f.to != "" {
		r, err := triage.ParseRoute(f.to)
		if err != nil {
			return o, usageError{err}
		}
		o.To = &r
	}
	return o, nil
}

// replayRequest checks the command line of a new replay: its selection
// and options, before anything is read.
func (a *app) replayRequest(f replayFlags) (triage.Selection, replay.Options, error) {
	sel, err := a.selection(f.ids, f.group, f.where)
	if err != nil {
		return sel, replay.Options{}, err
	}
	opts, err := f.options(a.replayAllow)
	if err != nil {
		return sel, opts, err
	}
	if f.inOrder != (f.orderBy != "") {
		return sel, opts, usageError{errors.New("--in-order and --order-by PATH go together: the path names each message's aggregate")}
	}
	if a.demo || a.snapshotPath != "" {
		return sel, opts, usageError{errors.New("replay changes a live broker: it cannot run on a snapshot or the demo")}
	}
	return sel, opts, nil
}

// runsForReal: the replay publishes, rather than printing its plan.
func (f replayFlags) runsForReal() bool { return f.yes && !f.dryRun && !f.asJSON }

func (a *app) replay(cmd *cobra.Command, queue string, f replayFlags) error {
	ctx := cmd.Context()
	sel, opts, err := a.replayRequest(f)
	if err != nil {
		return err
	}
	mem := a.limitReplayMemory() // the plan's read too
	defer mem.restore()
	if f.runsForReal() {
		lease, err := a.takeLease(ctx, queue, "replaying")
		if err != nil {
			return err
		}
		defer lease.Release()
		ctx = broker.WithLease(ctx, lease)
		if ran, err := a.replaySelecting(ctx, cmd, queue, sel, opts, f); ran {
			return err
		}
	}
	in, closeRead, err := a.inspectIndexed(ctx, queue)
	defer closeRead()
	if err != nil {
		return err
	}
	plan, err := replay.NewPlan(in, sel, opts)
	if err != nil {
		return usageError{err}
	}
	if err := a.useRevisions(&plan); err != nil {
		return err
	}
	plan.NameBodies(f.bodies)
	plan.Warnings = append(plan.Warnings, changedSince(plan, in)...)
	plan.CheckMemory(in, int64(a.memBudget), a.memBudgetSet)
	mem.fit(plan.LargestBody(in))
	a.noteTenant(sel.Where)
	out := cmd.OutOrStdout()
	if f.yes && !f.dryRun && !f.approved && a.gated(approval.GateReplay, plan.Items.Len()) {
		return a.proposeReplay(out, plan, in, f, sel)
	}
	if f.asJSON && f.yes && !f.dryRun {
		return usageError{errors.New("--json prints the plan only: check it, then run without --json and with --yes")}
	}
	return a.showAndRun(ctx, cmd, plan, in, f, closeRead)
}

// showAndRun prints plan (with --json, only that) and, with --yes and
// without --dry-run, carries it out.
//
// done releases what the read kept of the messages on disk: called before
// the replay runs, which holds and reads them again.
func (a *app) showAndRun(ctx context.Context, cmd *cobra.Command, plan replay.Plan, in triage.Inspection, f replayFlags, done func()) error {
	out := cmd.OutOrStdout()
	if f.asJSON {
		if err := writeJSON(out, replayPlanJSON(plan, in)); err != nil {
			return err
		}
		return plan.Runnable()
	}
	printPlan(out, plan, in, a.redactor())
	if err := plan.Runnable(); err != nil {
		return err
	}
	var aggs []replay.Aggregate
	var err error
	if f.inOrder {
		if aggs, err = orderedAggregates(out, plan, in, f.orderBy); err != nil {
			return err
		}
	}
	if !f.yes || f.dryRun {
		fmt.Fprintln(out, "dry run: nothing was changed; pass --yes to replay")
		return nil
	}
	if plan.AtLimit > 0 && !a.acceptCost {
		// Refused before the hold reads anything: on 4.3 even a free
		// requeue moves what was read to the back of the queue.
		return fmt.Errorf("replay %s: %d message(s) it would hold have no delivery left: a lost hold would drop them; nothing was changed, pass --accept-delivery-cost to replay anyway", plan.ID, plan.AtLimit)
	}
	if err := a.refuseReplayWithoutPermission(ctx, plan, false); err != nil {
		return err
	}
	if err := a.changing(); err != nil {
		return err
	}
	// Taken before the run: in (the index of the whole read) is let go.
	cut := cutShort("replay "+plan.ID, plan.Queue, plan.Selection, in.Batch)
	done()
	if f.inOrder {
		err = a.runInOrder(ctx, cmd, plan, aggs)
	} else {
		err = a.runReplay(ctx, cmd, plan)
	}
	if err == nil && cut != nil {
		fmt.Fprintln(out, "not read:", cut)
		return cut
	}
	return err
}

// proposeReplay turns a replay the policy gates into a proposal of
// exactly the plan's messages (exit 3), once the plan may run.
func (a *app) proposeReplay(out io.Writer, plan replay.Plan, in triage.Inspection, f replayFlags, sel triage.Selection) error {
	if !f.asJSON {
		printPlan(out, plan, in, a.redactor())
	}
	if err := plan.Runnable(); err != nil {
		return err
	}
	return a.propose(out, approval.GateReplay, plan.Queue, planMessages(plan, in), f.approvalPlan(sel), f.asJSON)
}

// approvalPlan is what a replay proposal will run with: the options given.
func (f replayFlags) approvalPlan(sel triage.Selection) approval.Plan {
	return approval.Plan{Selection: sel.String(), To: f.to, Rate: f.rate, Canary: f.canary, CanaryRate: f.canaryRate,
		Observe: f.observe.String(), Baseline: f.baseline.String(), MaxBacklog: f.maxBacklog, OrderBy: f.orderBy, InOrder: f.inOrder}
}

// planMessages are the inspected messages a plan replays, in plan order.
func planMessages(p replay.Plan, in triage.Inspection) []triage.Triaged {
	at := positions(in)
	out := make([]triage.Triaged, 0, p.Items.Len())
	for _, it := range p.Items.All() {
		if i, ok := at[it.ID]; ok {
			out = append(out, in.At(i))
		} else {
			out = append(out, triage.Triaged{})
		}
	}
	return out
}

// positions is where each of in's messages is, by id.
func positions(in triage.Inspection) map[string]int {
	at := make(map[string]int, in.Len())
	for i := range in.Len() {
		at[in.At(i).ID] = i
	}
	return at
}

func (a *app) resumeReplay(cmd *cobra.Command, f replayFlags) error {
	j, err := a.openJournal()
	if err != nil {
		return err
	}
	st, err := replay.Find(j, f.resume)
	if err != nil {
		return err
	}
	if !st.Interrupted() {
		return fmt.Errorf("replay %s is not interrupted (last: %s): nothing to resume", sanitize.Line(st.ID), sanitize.Line(string(st.Status)))
	}
	if err := a.sessionActsIn("replay "+st.ID, st.Vhost); err != nil {
		return err
	}
	if a.vhost != st.Vhost {
		fmt.Fprintf(cmd.ErrOrStderr(), "dlqt: replay %s ran in vhost %q: resuming there\n", sanitize.Line(st.ID), st.Vhost)
		a.vhost = st.Vhost
	}
	mem := a.limitReplayMemory() // the sizes are not journalled: the budget's
	defer mem.restore()
	plan := st.ResumePlan()
	if err := revisionBodies(j, &plan); err != nil {
		return err
	}
	plan.Options.AutoRamp = true // headless: nobody is there to press ramp-up
	if err := a.refuseReplayWithoutPermission(cmd.Context(), plan, true); err != nil {
		return err
	}
	fmt.Fprint(cmd.OutOrStdout(), resumeNotice(sanitize.Line(st.ID), sanitize.Line(st.Queue), plan.Items.Len(), st.Counts()))
	if st.Plan.Selecting {
		fmt.Fprintf(cmd.OutOrStdout(), "replay %s selected as it held: it resumes the %d message(s) it had taken; the ones it had not are still in %s, for a new replay\n",
			sanitize.Line(st.ID), plan.Items.Len(), sanitize.Line(st.Queue))
	}
	return a.runReplay(cmd.Context(), cmd, plan)
}

// resumeNotice says what resuming a replay of items messages does, from the
// outcomes journalled before the interruption: a confirmed message's source
// is acked without a new publish, a failed-again or returned one stays where
// it went, and every other one is published (again, if it was in flight).
func resumeNotice(id, queue string, items int, c map[replay.Outcome]int) string {
	resolved, confirmed, failed, returned := c[replay.OutcomeResolved], c[replay.OutcomeConfirmed], c[replay.OutcomeFailedAgain], c[replay.OutcomeReturned]
	done := ""
	if resolved > 0 { // acked before the interruption: left alone
		done = fmt.Sprintf("%d resolved, ", resolved)
	}
	twice := "A message published but not yet confirmed when dlqt stopped is published again: it may be delivered twice.\n"
	if sent := c[replay.OutcomePublished]; sent > 0 {
		twice = fmt.Sprintf("%d of them were sent before dlqt stopped with no answer journalled: they are published again and may be delivered twice (named at the end).\n", sent)
	}
	return fmt.Sprintf("resuming replay %s of %s: %s%d confirmed before the interruption (their sources are acked, not published again), %d failed again, %d returned, %d to publish.\n%s",
		id, queue, done, confirmed, failed, returned, items-resolved-confirmed-failed-returned, twice)
}

// holdLimit is how far an action's hold may read: --limit when the user
// set one, else the whole queue (the broker's memory headroom bounds it).
func (a *app) holdLimit() int {
	if a.limitSet {
		return a.limit
	}
	return 0
}

// replayOnce runs a plan headless, progress on stderr and the result on
// stdout, and returns how it ended.
func (a *app) replayOnce(ctx context.Context, cmd *cobra.Command, plan replay.Plan) (replay.Result, error) {
	return a.replayHeld(ctx, cmd, plan, nil)
}

// replayHeld is replayOnce; ended, if set, sees the port once the run and
// its hold have ended.
func (a *app) replayHeld(ctx context.Context, cmd *cobra.Command, plan replay.Plan, ended func(*broker.Replay)) (replay.Result, error) {
	rec, live, done, err := a.openForChange(ctx)
	if err != nil {
		return replay.Result{}, err
	}
	defer done()
	port, err := live.OpenReplay(ctx, plan.ID, plan.Queue)
	if err != nil {
		return replay.Result{}, err
	}
	defer port.Close()
	port.AcceptDeliveryCost = a.acceptCost
	port.HoldLimit = plan.HoldLimit(a.holdLimit()) // up to the last selected message: a lost hold costs no other
	port.ReadDepth = plan.ReadDepth
	errw := cmd.ErrOrStderr()
	for _, n := range port.Notes() {
		fmt.Fprintln(errw, "dlqt: note:", n)
	}
	before := len(port.Notes())
	res, err := replay.Run(ctx, plan, port, rec, nil, progressLines(errw))
	for _, n := range port.Notes()[before:] { // what the hold found (a hold another consumer cut short)
		fmt.Fprintln(errw, "dlqt: note:", sanitize.Line(n))
	}
	if ferr := port.Finish(ctx, func(acks int) {
		fmt.Fprintf(errw, "dlqt: replay %s: waiting for %s to apply the acks of %d sources (a group mixed with others costs a classic queue time for each; the queue stays leased until then)\n",
			sanitize.Line(plan.ID), sanitize.Line(plan.Queue), acks)
	}); ferr != nil {
		fmt.Fprintln(errw, "dlqt: note:", sanitize.Line(ferr.Error()))
	}
	printResult(cmd.OutOrStdout(), res)
	if ended != nil {
		ended(port)
	}
	return res, err
}

// runReplay carries out a plan headless: progress on stderr, the result on
// stdout, a non-zero exit when a threshold stopped it.
func (a *app) runReplay(ctx context.Context, cmd *cobra.Command, plan replay.Plan) error {
	res, err := a.replayOnce(ctx, cmd, plan)
	return replayEnded(plan, res, err)
}

// replayEnded is how a headless replay's run ends for the shell: its error,
// or the error of a threshold, an abort or messages changed since.
func replayEnded(plan replay.Plan, res replay.Result, err error) error {
	switch {
	case err != nil:
		return err
	case res.StoppedBecause != "":
		return fmt.Errorf("replay %s stopped: %s", res.ID, res.StoppedBecause)
	case res.Aborted:
		return fmt.Errorf("replay %s aborted; what was not published is still in %s", res.ID, plan.Queue)
	case len(res.Changed) > 0:
		return fmt.Errorf("replay %s: %d message(s) changed since the decision about them and were left in %s: %s", res.ID, len(res.Changed),
			sanitize.Line(plan.Queue), strings.Join(sanitize.Lines(res.Changed), ", "))
	}
	return nil
}

// progressLines writes a line per second and one per phase change.
func progressLines(w io.Writer) func(replay.Progress) {
	var last time.Time
	var phase replay.Phase
	return func(p replay.Progress) {
		if p.Phase == phase && time.Since(last) < time.Second {
			return
		}
		last, phase = time.Now(), p.Phase
		line := fmt.Sprintf("replay %s %s: published %d/%d, confirmed %d, returned %d, failed again %d, remaining %d, %.1f msg/s (target %.1f)",
			p.ReplayID, p.Phase, p.Published, p.Total, p.Confirmed, p.Returned, p.FailedAgain, p.Remaining, p.AchievedRate, p.TargetRate)
		if p.DestinationDepth >= 0 {
			line += fmt.Sprintf(", destination depth %d", p.DestinationDepth)
		}
		if p.ObserveLeft > 0 {
			line += fmt.Sprintf(", observing %s more", p.ObserveLeft.Round(time.Second))
		}
		if p.ETA > 0 {
			line += fmt.Sprintf(", eta %s", p.ETA.Round(time.Second))
		}
		if p.Blocked != "" {
			line += ", broker blocked publishing: " + sanitize.Line(p.Blocked)
		}
		fmt.Fprintln(w, "dlqt:", line)
	}
}

func printPlan(w io.Writer, p replay.Plan, in triage.Inspection, red *redact.Redactor) {
	fmt.Fprintf(w, "replay %s: %d message(s) of %s (%s), vhost %s\n", sanitize.Line(p.ID), p.Items.Len(), sanitize.Line(p.Queue), sanitize.Line(p.Selection.String()), sanitize.Line(p.Vhost))
	switch b := in.Batch; {
	case !b.Truncated():
	case b.Bound != "":
		fmt.Fprintf(w, "  only the first %d of %d messages were read (%s): a group covers those\n", b.Count(), b.Depth, sanitize.Line(b.Bound))
	default:
		fmt.Fprintf(w, "  only the first %d of %d messages were read (--limit): a group covers those\n", b.Count(), b.Depth)
	}
	for _, d := range p.Destinations {
		how := "not allowed"
		switch {
		case d.Original && d.RetryBucket != nil:
			how = "original route: " + views.BucketRoute(*d.RetryBucket) + "; to skip its wait: --to " + sanitize.Line(d.RetryBucket.Next.String())
		case d.FedBy != "":
			how = "the work queue retry bucket " + sanitize.Line(d.FedBy) + " feeds (allowed: where the original route leads)"
		case d.Original:
			how = "original route"
		case d.Allowed:
			how = "allowed by replay.allow"
		}
		queues := "no queue"
		if len(d.Queues) > 0 {
			queues = strings.Join(sanitize.Lines(d.Queues), ", ")
		}
		fmt.Fprintf(w, "  -> %s  %d message(s), %s, reaches %s\n", sanitize.Line(d.Route.String()), d.Count, how, queues)
	}
	for _, it := range p.Items.All() {
		if it.Revision != nil {
			fmt.Fprintf(w, "  %s: publishes revision %s (original sha256 %s)\n", sanitize.Line(it.ID), sanitize.Line(it.Revision.ID), sanitize.Line(it.Revision.OriginalSHA256))
		}
	}
	if len(p.Missing) > 0 {
		fmt.Fprintf(w, "  not found in the queue: %s\n", strings.Join(sanitize.Lines(p.Missing), ", "))
	}
	for _, t := range p.Sample {
		// The payload is redacted and sanitised, and pretty-printed: one line here.
		payload := strings.Join(strings.Fields(t.Payload), " ")
		fmt.Fprintf(w, "  sample %s  %s/%s  %s\n", sanitize.Line(t.ID), sanitize.Line(string(t.Reason)), dash(shownText(red, t.ReasonCode)), ansi.Truncate(payload, 100, "…"))
	}
	if p.Allowed {
		fmt.Fprintln(w, "  allowed: yes")
	} else {
		fmt.Fprintln(w, "  allowed: no")
	}
	printPlanEnd(w, p)
}

// printPlanEnd is the end of a plan as printed, planned or selecting as it
// holds: why it may not run, its warnings, and how it will run.
func printPlanEnd(w io.Writer, p replay.Plan) {
	for _, pr := range p.Problems {
		fmt.Fprintln(w, "  problem:", sanitize.Line(pr))
	}
	for _, warning := range p.Warnings {
		fmt.Fprintln(w, "  warning:", sanitize.Line(warning))
	}
	if p.Options.Baseline > 0 && len(p.DestinationQueues) > 0 {
		fmt.Fprintf(w, "  first %s counting the destination's own dead letters (only more than that rate is collateral)\n", p.Options.Baseline)
	}
	fmt.Fprintf(w, "  canary %d at %.1f msg/s, observe %s, then up to %.1f msg/s; at-least-once: a duplicate is possible after a crash\n",
		p.Options.Canary, p.Options.CanaryRate, p.Options.Observe, p.Options.Rate)
}

// changedSince warns, before anything is held, of the items whose body as
// read is not the one their revision or proposal was made on: the run
// will leave them untouched.
//
// It looks only when some item was decided on by its body: a map of every
// message read was 100,000 copies of an index entry, 150 MB of RSS for a
// moment at the end of a whole group's plan.
func changedSince(plan replay.Plan, in triage.Inspection) []string {
	if !plan.Items.DecidedByBody() {
		return nil
	}
	at := positions(in)
	var out []string
	for _, it := range plan.Items.All() {
		i, ok := at[it.ID]
		if !ok || it.Revision == nil && it.BodySHA256 == "" {
			continue
		}
		whole, err := in.At(i).WithMessage()
		if err != nil { // the run reads the body again and decides
			continue
		}
		if why := it.Changed(whole.Message.Body); why != "" {
			out = append(out, it.ID+" "+why)
		}
	}
	return out
}

func printResult(w io.Writer, r replay.Result) {
	fmt.Fprintf(w, "replay %s: resolved %d, failed again %d, returned %d, untouched %d (published %d)\n",
		sanitize.Line(r.ID), r.Resolved, r.FailedAgain, r.Returned, r.Untouched, r.Published)
	if r.PacedPublished > 0 && r.PacedElapsed <= 0 { // one publish spans no interval
		fmt.Fprintf(w, "paced: %d published after the canary (one publish has no rate)\n", r.PacedPublished)
	} else if r.PacedPublished > 0 {
		fmt.Fprintf(w, "paced: %d published in %s, %.1f msg/s\n", r.PacedPublished, r.PacedElapsed.Round(time.Millisecond), r.PacedRate())
	}
	if r.StoppedBecause != "" {
		fmt.Fprintln(w, "stopped:", sanitize.Line(r.StoppedBecause))
	}
	if len(r.Unacked) > 0 {
		fmt.Fprintf(w, "confirmed at the destination but not acked, still parked (%d): %s\n", len(r.Unacked), strings.Join(sanitize.Lines(r.Unacked), ", "))
	}
	if len(r.Gone) > 0 {
		fmt.Fprintf(w, "confirmed before the interruption, source no longer in the queue (acked then, or taken since) (%d): %s\n", len(r.Gone), strings.Join(sanitize.Lines(r.Gone), ", "))
	}
	if len(r.AckedAgain) > 0 {
		fmt.Fprintf(w, "resolved before the interruption but back in the queue (the broker never applied the ack), acked again (%d): %s\n", len(r.AckedAgain), strings.Join(sanitize.Lines(r.AckedAgain), ", "))
	}
	for _, id := range r.Changed {
		fmt.Fprintf(w, "left untouched, %s %s\n", sanitize.Line(id), sanitize.Line(r.Why[id]))
	}
	if len(r.Unconfirmed) > 0 {
		fmt.Fprintf(w, "published, confirm not received: may be delivered twice (%d): %s\n", len(r.Unconfirmed), strings.Join(sanitize.Lines(r.Unconfirmed), ", "))
	}
	if len(r.Republished) > 0 {
		fmt.Fprintf(w, "sent before the interruption with no answer journalled, published again: may be delivered twice (%d): %s\n", len(r.Republished), strings.Join(sanitize.Lines(r.Republished), ", "))
	}
	if len(r.Collateral) > 0 {
		fmt.Fprintf(w, "not replayed but dead-lettered from a destination meanwhile (%d): %s\n", len(r.Collateral), strings.Join(sanitize.Lines(r.Collateral), ", "))
	}
	if r.DeadLettersAtBaseline > 0 {
		fmt.Fprintf(w, "the destination dead-lettered %d message(s) of its own meanwhile, within its rate of %.2f/s before the replay: not collateral\n",
			r.DeadLettersAtBaseline, r.BaselineRate)
	}
	for _, warning := range r.Warnings {
		fmt.Fprintln(w, "warning:", sanitize.Line(warning))
	}
	if r.Resumable {
		fmt.Fprintf(w, "the replay is resumable: dlqt replay --resume %s acks the confirmed sources without publishing them again, acks again a resolved source the broker put back, and sends what was not sent\n", sanitize.Line(r.ID))
	}
}
