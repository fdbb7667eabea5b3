package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// Replay is the replay screen: the dry run of a plan, then the live gauge
// of the running replay, then its outcome. It renders what internal/ui
// hands it; the replay itself runs in internal/triage.
type Replay struct {
	ctx     *Context
	plan    replay.Plan
	prog    *replay.Progress // nil until the replay reports
	res     *replay.Result   // set when it ended
	runErr  string
	what    string // what was selected, in words
	started bool
	resumed bool // a resume of an interrupted replay
	width   int
	height  int
}

// NewReplay returns an empty replay screen.
func NewReplay(ctx *Context) Replay { return Replay{ctx: ctx} }

// SetPlan shows the dry run of p; what says in words what was selected
// ("group rejected/INVALID_SKU"); resumed says it finishes an interrupted
// replay.
func (r *Replay) SetPlan(p replay.Plan, what string, resumed bool) {
	*r = Replay{ctx: r.ctx, plan: p, what: what, resumed: resumed, width: r.width, height: r.height}
}

// Plan is the plan shown.
func (r *Replay) Plan() replay.Plan { return r.plan }

// Start turns the dry run into the gauge.
func (r *Replay) Start() { r.started = true }

// SetProgress shows the latest progress report.
func (r *Replay) SetProgress(p replay.Progress) { r.prog = &p }

// SetResult shows how the replay ended; err is why it failed, if it did.
func (r *Replay) SetResult(res replay.Result, err error) {
	r.res = &res
	r.runErr = ""
	if err != nil {
		r.runErr = sanitize.Line(err.Error())
	}
}

// Started reports whether the replay was started (gauge rather than dry run).
func (r *Replay) Started() bool { return r.started }

// Running reports a started replay that has not ended.
func (r *Replay) Running() bool { return r.started && r.res == nil }

// Phase is the phase last reported, empty before the first report.
func (r *Replay) Phase() replay.Phase {
	if r.prog == nil {
		return ""
	}
	return r.prog.Phase
}

// SetSize sets the area of the screen body.
func (r *Replay) SetSize(w, h int) { r.width, r.height = w, h }

// View draws the dry run, or the gauge once started.
func (r *Replay) View() string {
	if !r.started {
		return fitLines(r.dryRun(), r.width, r.height)
	}
	return fitLines(r.gauge(), r.width, r.height)
}

const replayLabel = 13

func (r *Replay) row(b *strings.Builder, label, value string) {
	b.WriteString(r.ctx.Styles.Label.Render(Fit(label, replayLabel)))
	b.WriteString(value)
	b.WriteByte('\n')
}

// BucketRoute says what an original route that is a retry bucket is:
// "retry bucket orders.retry.1 → orders.q", sanitised.
func BucketRoute(h triage.RetryHop) string {
	h.Bucket, h.Feeds = sanitize.Line(h.Bucket), sanitize.Lines(h.Feeds)
	return h.String()
}

// BucketOffer offers the work queue a retry bucket feeds as the
// destination, skipping the bucket's wait.
func BucketOffer(h triage.RetryHop) string {
	return "to skip its wait, replay to " + sanitize.Line(routeText(h.Next))
}

// DestinationStatus says in words whether a destination may be used.
func DestinationStatus(d replay.Destination) string {
	switch {
	case d.Original && d.RetryBucket != nil:
		return BucketRoute(*d.RetryBucket) + " (original route, allowed); " + BucketOffer(*d.RetryBucket)
	case d.FedBy != "":
		return "the work queue retry bucket " + sanitize.Line(d.FedBy) + " feeds (allowed: where the original route leads)"
	case d.Original:
		return "original route (allowed)"
	case d.Allowed:
		return "allowed by replay.allow"
	}
	return "NOT allowed: not the original route, no replay.allow pattern matches"
}

func (r *Replay) dryRun() string {
	st := r.ctx.Styles
	p := r.plan
	var b strings.Builder
	title := "Replay dry run — nothing has been sent"
	if r.resumed {
		title = "Resume interrupted replay — nothing has been sent yet"
	}
	b.WriteString(st.Title.Render(title) + "\n")
	r.row(&b, "replay", p.ID+" of "+sanitize.Line(p.Queue))
	what := r.what
	if what == "" {
		what = p.Selection.String()
	}
	r.row(&b, "messages", fmt.Sprintf("%s (%s)", Plural(p.Items.Len(), "message"), what))
	if pr := p.Prior; pr != nil {
		r.row(&b, "before", fmt.Sprintf("%d confirmed (acked, not sent again), %d settled", len(pr.Confirmed), len(pr.Settled)))
	}
	for i, d := range p.Destinations {
		label := ""
		if i == 0 {
			label = "destination"
		}
		reach := "reaches no queue"
		if len(d.Queues) > 0 {
			reach = "→ " + strings.Join(sanitize.Lines(d.Queues), ", ")
		}
		line := fmt.Sprintf("%s  %d msg  %s", sanitize.Line(routeText(d.Route)), d.Count, reach)
		r.row(&b, label, line)
		status := DestinationStatus(d)
		if !d.Allowed {
			status = st.Warn.Render(status)
		}
		r.row(&b, "", status)
	}
	if len(p.Destinations) == 0 {
		r.row(&b, "destination", "none")
	}
	o := p.Options
	if ToPublish(p) > 0 {
		r.row(&b, "canary", fmt.Sprintf("%d at %s msg/s, then observe %s", o.Canary, rate(o.CanaryRate), o.Observe))
		r.row(&b, "then", fmt.Sprintf("ramp up (doubling) to at most %s msg/s", rate(o.Rate)))
	} else {
		r.row(&b, "publish", "nothing is left to publish: starting only acks what was confirmed and closes the replay")
	}
	for _, pr := range p.Problems {
		b.WriteString(st.Warn.Render("problem: "+sanitize.Line(pr)) + "\n")
	}
	for _, w := range p.Warnings {
		b.WriteString(st.Warn.Render("bounded: "+sanitize.Line(w)) + "\n")
	}
	if len(p.Missing) > 0 {
		r.row(&b, "not found", strings.Join(sanitize.Lines(p.Missing), ", "))
	}
	var revised []string
	for _, it := range p.Items.All() {
		if it.Revision != nil {
			revised = append(revised, sanitize.Line(it.ID)+" -> "+sanitize.Line(it.Revision.ID))
		}
	}
	if len(revised) > 0 {
		r.row(&b, "revisions", strings.Join(revised, ", ")+" (edited: the copy carries the revision)")
	}
	b.WriteString(st.Section.Render("sample (redacted)") + "\n")
	for _, t := range p.Sample {
		payload := strings.Join(strings.Fields(t.Payload), " ") // one line: indented JSON starts with a bare "{"
		b.WriteString(fmt.Sprintf("  %s  %s/%s  %s\n", sanitize.Line(t.ID), t.Reason, r.ctx.shown(t.ReasonCode),
			sanitize.Line(payload)))
	}
	k := r.ctx.Keys
	hint := fmt.Sprintf("%s starts the canary (asks first) • %s goes back, nothing sent", k.Open.Help().Key, k.Back.Help().Key)
	if ToPublish(p) == 0 {
		hint = fmt.Sprintf("%s finishes it (asks first) • %s goes back, nothing sent", k.Open.Help().Key, k.Back.Help().Key)
	}
	if len(p.Problems) > 0 || p.Items.Len() == 0 {
		hint = "this plan may not run (see the problems above) • " + k.Back.Help().Key + " goes back"
	}
	b.WriteString(st.Dim.Render(hint) + "\n")
	return b.String()
}

// ToPublish is how many messages of p are still to be published: a resume
// plan leaves out what was confirmed (acked only) and what was settled.
func ToPublish(p replay.Plan) int {
	n := p.Items.Len()
	if pr := p.Prior; pr != nil {
		n -= len(pr.Confirmed) + len(pr.Settled)
	}
	return max(n, 0)
}

// routeText is a route as the user types it: EXCHANGE:ROUTING_KEY.
func routeText(r triage.Route) string { return r.Exchange + ":" + r.RoutingKey }

// PhaseText says in words where a replay is, with what the operator can do.
func PhaseText(p replay.Progress, k KeyMap) string {
	switch p.Phase {
	case replay.PhaseHolding:
		return "HOLDING — taking the selected messages out of circulation"
	case replay.PhaseBaseline:
		return "BASELINE — counting the destination's own dead letters before the canary; nothing sent yet"
	case replay.PhaseCanary:
		return "CANARY — publishing the first messages slowly"
	case replay.PhaseObserving:
		return fmt.Sprintf("OBSERVING — %s left: watching for failures, returns, backlog", p.ObserveLeft.Round(time.Second))
	case replay.PhaseAwaitingRamp:
		return fmt.Sprintf("WAITING FOR YOUR DECISION — canary passed: %s ramps up, %s aborts",
			k.RampUp.Help().Key, k.Abort.Help().Key)
	case replay.PhaseRunning:
		return "RUNNING"
	case replay.PhasePaused:
		return fmt.Sprintf("PAUSED — %s resumes", k.Pause.Help().Key)
	case replay.PhaseStopped:
		return "STOPPED: " + sanitize.Line(p.StoppedBecause)
	case replay.PhaseAborted:
		return "ABORTED — nothing more is published"
	case replay.PhaseDone:
		return "FINISHED"
	}
	return "STARTING — nothing has been sent yet"
}

func (r *Replay) gauge() string {
	st := r.ctx.Styles
	p := r.plan
	var b strings.Builder
	dest := "original routes"
	if len(p.Destinations) == 1 {
		dest = sanitize.Line(routeText(p.Destinations[0].Route))
	}
	b.WriteString(st.Title.Render(fmt.Sprintf("Replay %s: %s → %s", p.ID, sanitize.Line(p.Queue), dest)) + "\n")
	pr := replay.Progress{Total: p.Items.Len(), Remaining: p.Items.Len(), DestinationDepth: -1}
	if r.prog != nil {
		pr = *r.prog
	}
	phase := r.phaseText(pr)
	r.row(&b, "phase", st.Warn.Render(phase))
	if pr.Blocked != "" {
		r.row(&b, "blocked", st.Warn.Render("the broker blocked publishing: "+sanitize.Line(pr.Blocked)))
	}
	if pr.SettlingAcks > 0 && r.res == nil {
		r.row(&b, "finishing", st.Warn.Render(fmt.Sprintf("waiting for %s to apply %s source acks",
			sanitize.Line(p.Queue), Count(pr.SettlingAcks))))
	}
	r.row(&b, "rate", fmt.Sprintf("target %s msg/s   achieved %s msg/s", rate(pr.TargetRate), rate(pr.AchievedRate)))
	sparkW := max(min(60, r.width-replayLabel-1), 5)
	peak := 0.0
	for _, v := range pr.History {
		peak = max(peak, v)
	}
	r.row(&b, "last minute", Sparkline(pr.History, sparkW))
	r.row(&b, "", st.Dim.Render(fmt.Sprintf("published per second, peak %s", rate(peak))))
	r.row(&b, "progress", progressBar(pr.Published, pr.Total, min(30, r.width-replayLabel-20))+
		fmt.Sprintf(" %d of %d published", pr.Published, pr.Total))
	r.row(&b, "confirmed", fmt.Sprintf("%-8d returned %-8d failed again %d", pr.Confirmed, pr.Returned, pr.FailedAgain))
	r.row(&b, "remaining", fmt.Sprintf("%-8d in flight %d", pr.Remaining, pr.InFlight))
	depth := "unknown"
	if pr.DestinationDepth >= 0 {
		depth = Count(pr.DestinationDepth) + " ready"
		if len(p.DestinationQueues) > 0 {
			depth += " in " + strings.Join(sanitize.Lines(p.DestinationQueues), ", ")
		}
	}
	r.row(&b, "destination", depth)
	eta := "-" // only while publishing: waiting on the operator has no end time
	if pr.ETA > 0 && (pr.Phase == replay.PhaseRunning || pr.Phase == replay.PhaseCanary) && r.res == nil {
		eta = pr.ETA.Round(time.Second).String()
	}
	r.row(&b, "eta", fmt.Sprintf("%-8s elapsed %s", eta, pr.Elapsed.Round(time.Second)))
	if r.res != nil {
		b.WriteString(r.outcome())
	}
	return b.String()
}

// phaseText is the phase in words. Only the run's Result says FINISHED: a
// report says "done" whenever nothing is queued, which is also true before
// the selected messages are held, so such a report is not the end.
func (r *Replay) phaseText(pr replay.Progress) string {
	switch {
	case r.res != nil:
		return r.endText()
	case pr.SettlingAcks > 0:
		return "FINISHING — the broker is applying the source acks"
	case pr.Phase == replay.PhaseDone && pr.Published == 0:
		return PhaseText(replay.Progress{Phase: replay.PhaseHolding}, r.ctx.Keys)
	case pr.Phase == replay.PhaseDone:
		return "FINISHING — waiting for the last confirms"
	}
	return PhaseText(pr, r.ctx.Keys)
}

func progressBar(done, total, w int) string {
	if w < 5 {
		return ""
	}
	n := 0
	if total > 0 {
		n = min(w*done/total, w)
	}
	return strings.Repeat("█", n) + strings.Repeat("░", w-n)
}

func (r *Replay) endText() string {
	res := r.res
	switch {
	case r.runErr != "":
		return "FAILED: " + r.runErr
	case res.StoppedBecause != "":
		return "STOPPED: " + sanitize.Line(res.StoppedBecause)
	case res.Aborted:
		return "ABORTED — what was not published is still in " + sanitize.Line(r.plan.Queue)
	}
	return "FINISHED"
}

func (r *Replay) outcome() string {
	st := r.ctx.Styles
	res := r.res
	var b strings.Builder
	b.WriteString(st.Section.Render("outcome") + "\n")
	r.row(&b, "resolved", fmt.Sprintf("%d (confirmed at the destination, removed from %s)", res.Resolved, sanitize.Line(r.plan.Queue)))
	r.row(&b, "failed again", fmt.Sprintf("%d (came back into a parking queue)", res.FailedAgain))
	r.row(&b, "returned", fmt.Sprintf("%d (returned, nacked or unconfirmed: kept in %s)", res.Returned, sanitize.Line(r.plan.Queue)))
	r.row(&b, "untouched", fmt.Sprintf("%d (never published: kept)", res.Untouched))
	if res.Confirmed > 0 {
		r.row(&b, "not acked", fmt.Sprintf("%d (confirmed at the destination, still in %s: resuming acks them)", res.Confirmed, sanitize.Line(r.plan.Queue)))
	}
	if n := len(res.Unconfirmed); n > 0 {
		r.row(&b, "unconfirmed", fmt.Sprintf("%d (published, confirm not received: may be delivered twice)", n))
	}
	for _, id := range res.Changed {
		r.row(&b, "changed", sanitize.Line(id)+" "+sanitize.Line(res.Why[id]))
	}
	if n := len(res.Republished); n > 0 {
		r.row(&b, "sent twice?", fmt.Sprintf("%d (sent before the interruption with no answer journalled, published again: may be delivered twice)", n))
	}
	if n := len(res.Collateral); n > 0 {
		r.row(&b, "collateral", fmt.Sprintf("%d other message(s) dead-lettered from the destination meanwhile", n))
	}
	for _, w := range res.Warnings {
		b.WriteString(st.Dim.Render(sanitize.Line(w)) + "\n")
	}
	dup := "Duplicates are possible only if a replay is interrupted (crash, kill) and resumed."
	if r.resumed {
		dup = "This replay was resumed: a message published just before the interruption may have arrived twice."
	}
	b.WriteString(st.Dim.Render(dup) + "\n")
	return b.String()
}

// ShortHelp implements help.KeyMap.
func (r *Replay) ShortHelp() []key.Binding {
	k := r.ctx.Keys
	switch {
	case !r.started:
		start := k.Open
		start.SetHelp(k.Open.Help().Key, "start")
		if ToPublish(r.plan) == 0 && r.plan.Prior != nil {
			start.SetHelp(k.Open.Help().Key, "finish")
			return []key.Binding{start, k.Back, k.Quit}
		}
		return []key.Binding{start, k.Destination, k.Canary, k.Observe, k.Rate, k.Quit}
	case r.Running():
		return []key.Binding{k.RampUp, k.Pause, k.Abort, k.Help, k.Quit}
	}
	return []key.Binding{k.Back, k.Journal, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (r *Replay) FullHelp() [][]key.Binding {
	k := r.ctx.Keys
	return [][]key.Binding{{k.Open, k.Destination, k.Canary, k.Observe, k.Rate}, {k.RampUp, k.Pause, k.Abort}, {k.Back, k.Help, k.Quit}}
}
