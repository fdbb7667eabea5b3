package replay

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// sampleSize is how many selected messages a dry run shows.
const sampleSize = 3

// samplePayload is how much of a sample's payload a plan keeps: the dry
// run shows it on one line.
const samplePayload = 4 << 10

// sampleRender is the largest body a plan of index entries renders again
// for a sample's payload: a larger one would cost its whole rendering for
// the 4 KiB shown (a 32 MiB message, twice what moving it takes).
const sampleRender = 1 << 20

// SampleOf is what a plan keeps of t for its dry run: no body, and the
// start of its redacted payload. The plan lives as long as the run, so a
// sample kept whole held a 128 MiB message (body and payload) twice over
// beside the copy the hold reads to publish.
func SampleOf(t triage.Triaged) triage.Triaged {
	t.Message.Body = nil
	if len(t.Payload) > samplePayload {
		t.Payload = strings.ToValidUTF8(t.Payload[:samplePayload], "") + "…"
	}
	return t
}

// NewPlan is the dry run of a replay of the selected messages of an
// inspected queue: no I/O. Each message goes to opts.To, else to its
// original route (OriginalRoute); a destination other than a message's own
// original route must match opts.Allow. A plan with Problems may not run.
func NewPlan(in triage.Inspection, sel triage.Selection, opts Options) (Plan, error) {
	if err := sel.Validate(); err != nil {
		return Plan{}, err
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return Plan{}, err
	}
	p := Plan{ID: NewID(time.Now()), Vhost: in.Batch.Vhost, Queue: in.Batch.Queue, Selection: sel, Options: opts, Allowed: true}
	if p.Vhost == "" {
		p.Vhost = in.Topology.Vhost
	}
	msgs := in.List()
	chosen := choose(sel, msgs)
	p.Missing = missingIDs(sel.IDs, msgs, chosen)
	dests, order, err := p.route(msgs, chosen, in.Topology)
	if err != nil {
		return Plan{}, err
	}
	if err := p.judge(dests, order); err != nil {
		return Plan{}, err
	}
	p.Problems = planProblems(p, in.Topology)
	p.Bounded = boundedQueues(p.DestinationQueues, in.Topology)
	p.Warnings = boundedWarnings(p.Bounded, p.Items.Len())
	p.HoldUpTo = holdBound(msgs, chosen)
	p.ReadDepth = in.Batch.Depth
	atLimit, warnings := atLimitWarning(in, p.HoldUpTo)
	p.AtLimit, p.Warnings = atLimit, append(p.Warnings, warnings...)
	return p, nil
}

// choose is where the messages sel selects are in msgs: a plan of a whole
// queue does not copy every entry it routes (100,000 index entries in a
// slice are 55 MB; a packed read unpacks each as it is routed).
func choose(sel triage.Selection, msgs triage.List) []int32 {
	var out []int32 // four bytes a message: a read holds fewer than 2^31
	selected := sel.Matcher()
	for i := range msgs.Len() {
		if selected(msgs.At(i)) {
			out = append(out, int32(i))
		}
	}
	return out
}

// missingIDs are the selected ids the inspection did not find.
func missingIDs(ids []string, msgs triage.List, chosen []int32) []string {
	if len(ids) == 0 {
		return nil
	}
	found := map[string]bool{}
	for _, i := range chosen {
		found[msgs.At(int(i)).ID] = true
	}
	var missing []string
	for _, id := range ids {
		if !found[id] && !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	return missing
}

// route gives each chosen message its item and destination (in the order
// first met); a message with nowhere to go is unroutable.
//
// An index entry of a spilled read (triage.Spilled) has no headers, but
// knows its original route (worked out as it was read): its message is read
// back from disk only for a sample, a new destination (whose queues its
// headers may pick) or a route that may lead through a retry bucket, and
// dropped again, so a plan of a whole queue holds its index, not its
// messages, and reads back a few of them.
func (p *Plan) route(msgs triage.List, chosen []int32, top triage.Topology) (map[triage.Route]*Destination, []triage.Route, error) {
	dests := map[triage.Route]*Destination{}
	var order []triage.Route
	rt := triage.NewRouter(top) // indexed once: a --to asks it of every message
	if len(chosen) > 0 {
		p.Items.Grow(len(chosen))
		p.at = make([]int32, 0, len(chosen))
	}
	for _, i := range chosen {
		t, back := msgs.At(int(i)), false
		// readBack reads an index entry's message back (routable), once:
		// only for what its entry does not say, so a plan of a whole queue
		// reads back its samples and one message a destination, not every
		// message (100,000 headers decoded again were 2 to 4 s of a plan).
		readBack := func() error {
			if back {
				return nil
			}
			w, err := p.routable(t)
			t, back = w, true
			return err
		}
		if len(p.Sample) < sampleSize || !triage.RoutedOnRead(t) {
			if err := readBack(); err != nil {
				return nil, nil, err
			}
		}
		orig, known := OriginalRoute(t)
		if !known && t.Indexed() && t.Message.Body == nil && !triage.RoutedOnRead(t) { // read without its body: an envelope may state the route
			w, err := t.WithMessage()
			if err != nil {
				return nil, nil, err
			}
			t = w
			orig, known = OriginalRoute(t)
		}
		item := Item{ID: t.ID} // Items.Append copies it: the plan outlives the read's index
		fedBy := ""
		switch to := p.Options.To; {
		case to != nil:
			item.Route, item.Original = *to, known && orig == *to
			ask := known && !item.Original
			if ask && !back && !rt.MayRetryThrough(orig) {
				ask = false // no queue its route may reach is a retry bucket: its headers cannot make one
			}
			if ask {
				if err := readBack(); err != nil {
					return nil, nil, err
				}
			}
			if hop, ok := bucketHop(t, orig, ask, rt, p.Queue); ok && hop.Next == *to {
				fedBy = hop.Bucket // straight to the work queue the original route's bucket feeds
			}
		case known:
			item.Route, item.Original = orig, true
		default:
			p.Unroutable = append(p.Unroutable, strings.Clone(t.ID))
			continue
		}
		p.Items.Append(item)
		p.at = append(p.at, i)
		d := dests[item.Route]
		if d == nil {
			if err := readBack(); err != nil { // its headers may route (a headers exchange)
				return nil, nil, err
			}
			d = &Destination{Route: item.Route, Original: true, Queues: top.Routes(item.Route.Exchange, item.Route.RoutingKey, t.Message.Headers), own: true, FedBy: fedBy}
			if hop, ok := bucketHop(t, item.Route, item.Original, rt, p.Queue); ok {
				d.RetryBucket = &hop
			}
			dests[item.Route] = d
			order = append(order, item.Route)
		}
		d.Count++
		d.Original = d.Original && item.Original
		d.own = d.own && (item.Original || fedBy != "")
		if len(p.Sample) < sampleSize {
			p.Sample = append(p.Sample, SampleOf(t))
		}
	}
	return dests, order, nil
}

// routable is t as the plan routes it: an index entry (triage.Spilled) is
// read back, its headers alone where the store can leave the body out (the
// route is in the headers but for an envelope that states it: route reads
// the body then), whole for the few the dry run shows with their payload.
func (p *Plan) routable(t triage.Triaged) (triage.Triaged, error) {
	if !t.Indexed() || t.Message.Body != nil { // whole, or read back already
		return t, nil
	}
	sample := len(p.Sample) < sampleSize
	read := t.WithHeaders
	if sample && t.PayloadBytes <= sampleRender { // derived again, read once
		read = t.Whole
	}
	w, err := read()
	if err != nil {
		return t, err
	}
	if sample && w.Payload == "" {
		w.Payload = fmt.Sprintf("(a body of %d bytes: not rendered for the plan)", w.PayloadBytes)
	}
	return w, nil
}

// bucketHop is the retry bucket r (a message's original route) lands in
// and where that bucket sends the message on; nothing unless ask.
func bucketHop(t triage.Triaged, r triage.Route, ask bool, rt *triage.Router, parking string) (triage.RetryHop, bool) {
	if !ask {
		return triage.RetryHop{}, false
	}
	return rt.RetryBucketOf(r, t.Message.Headers, triage.RawDeaths(t.Message.Headers), parking)
}

// judge decides which destinations are allowed (a message's own original
// route always is) and gathers the queues they reach.
func (p *Plan) judge(dests map[triage.Route]*Destination, order []triage.Route) error {
	reach := map[string]bool{}
	for _, r := range order {
		d := dests[r]
		d.Allowed = d.Original || d.own // a bucket's work queue is where the original route leads
		if !d.Allowed {
			ok, err := Allowed(r, p.Options.Allow)
			if err != nil {
				return err
			}
			d.Allowed = ok
		}
		if !d.Allowed {
			p.Allowed = false
			p.Disallowed = append(p.Disallowed, r)
		}
		for _, q := range d.Queues {
			reach[q] = true
		}
		p.Destinations = append(p.Destinations, *d)
	}
	for q := range reach {
		p.DestinationQueues = append(p.DestinationQueues, q)
	}
	slices.Sort(p.DestinationQueues)
	return nil
}

// planProblems says why a plan may not run, one line each.
func planProblems(p Plan, top triage.Topology) []string {
	exchanges := map[string]bool{}
	for _, x := range top.Exchanges {
		exchanges[x.Name] = true
	}
	var out []string
	if p.Items.Len() == 0 && len(p.Unroutable) == 0 && !p.Selecting { // a selecting plan's items come as it holds
		out = append(out, "no message of "+p.Queue+" matches "+p.Selection.String())
	}
	if n := len(p.Unroutable); n > 0 {
		out = append(out, fmt.Sprintf("%d message(s) carry no original route (no x-first-death-exchange, x-original-exchange or envelope route); name a destination with --to: %s",
			n, strings.Join(firstN(p.Unroutable, 5), ", ")))
	}
	for _, r := range p.Disallowed {
		out = append(out, fmt.Sprintf("destination %s is not a message's own original route and no replay.allow pattern matches it", r))
	}
	for _, d := range p.Destinations {
		if d.Route.Exchange != "" && len(exchanges) > 0 && !exchanges[d.Route.Exchange] {
			out = append(out, fmt.Sprintf("destination exchange %q does not exist in vhost %q (a publish to it would close the channel)", d.Route.Exchange, p.Vhost))
		}
		if slices.Contains(d.Queues, p.Queue) {
			out = append(out, fmt.Sprintf("destination %s routes back into %s itself", d.Route, p.Queue))
		}
	}
	return out
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
}

// Runnable reports why the plan may not run, or nil.
func (p Plan) Runnable() error {
	if len(p.Problems) > 0 {
		return fmt.Errorf("replay %s may not run: %s", p.ID, strings.Join(p.Problems, "; "))
	}
	if p.Items.Len() == 0 && !p.Selecting {
		return fmt.Errorf("replay %s has nothing to replay", p.ID)
	}
	return nil
}

// IDs are the plan's message ids in queue order.
func (p Plan) IDs() []string {
	return p.Items.IDs()
}

// NewID names a replay: sortable by start, unique by a random suffix.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "rp-" + now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

func (o Options) withDefaults() Options {
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.Canary <= 0 {
		o.Canary = DefaultCanary
	}
	if o.CanaryRate <= 0 {
		o.CanaryRate = DefaultCanaryRate
	}
	o.CanaryRate = min(o.CanaryRate, o.Rate)
	if o.Observe <= 0 {
		o.Observe = DefaultObserve
	}
	if o.ConfirmTimeout <= 0 {
		o.ConfirmTimeout = DefaultConfirmTimeout
	}
	return o
}

func (o Options) validate() error {
	if o.MaxBacklog < 0 {
		return fmt.Errorf("max backlog must not be negative, got %d", o.MaxBacklog)
	}
	if o.Baseline < 0 {
		return fmt.Errorf("baseline must not be negative, got %s", o.Baseline)
	}
	_, err := Allowed(triage.Route{}, o.Allow) // a bad pattern is said at plan time
	return err
}
