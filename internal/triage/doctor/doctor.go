// Package doctor reads a vhost's topology and reports the bugs that lose or
// endlessly recycle dead letters: cycles, missing or unroutable
// dead-letter exchanges, length limits without one, retry routes that lose
// their key, parking queues that consume or drop.
package doctor

import (
	"context"
	"sort"

	"github.com/dlqt/dlqt/internal/triage"
)

// Finding is one topology bug the doctor found, worded for a tired
// responder: Detail names the queues and exchanges involved, Fix says what
// to change. Queue and Exchange are the main ones, raw (views sanitise).
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Queue    string `json:"queue"`
	Exchange string `json:"exchange"`
	Detail   string `json:"detail"`
	Fix      string `json:"fix"`
}

// Severities, most urgent first. An error loses or endlessly recycles
// messages as the topology stands; a warning can lose them under load or by
// accident; an advisory is worth knowing before the next incident.
const (
	SeverityError    = "error"
	SeverityWarning  = "warning"
	SeverityAdvisory = "advisory"
)

// Kinds of finding.
const (
	KindCycleSilentDrop    = "dlx-cycle-silent-drop"
	KindCycleInfinite      = "dlx-cycle-infinite"
	KindMissingExchange    = "dlx-missing-exchange"
	KindUnroutable         = "dlx-unroutable"
	KindMaxlenWithoutDLX   = "maxlen-without-dlx"
	KindRetryRouteMismatch = "retry-route-mismatch"
	KindParkingConsumers   = "parking-has-consumers"
	KindParkingLoses       = "parking-loses-messages"
	KindDLXByArgument      = "dlx-by-argument"
	KindParkingByName      = "parking-by-name"
)

// Diagnose reads a topology and its parking queues (see FindParkingQueues)
// and returns every finding, ordered by severity, then queue, then kind.
func Diagnose(t triage.Topology, parking []triage.ParkingQueue) []Finding {
	d := newDoctor(t)
	var out []Finding
	out = append(out, d.cycles()...)
	out = append(out, d.deadLetterRoutes()...)
	out = append(out, d.lengthLimits(parking)...)
	out = append(out, parkingFindings(parking, t.Broker)...)
	out = append(out, byNameFindings(parking, out)...)
	out = append(out, d.argumentDLXs()...)
	sortFindings(out)
	return out
}

// Run is the doctor use case: read the topology, find the parking
// queues, diagnose. The headless command and the doctor screen both call it.
func Run(ctx context.Context, r triage.Reader, patterns []string) ([]Finding, triage.Topology, error) {
	parking, top, err := triage.ListParking(ctx, r, patterns)
	if err != nil {
		return nil, top, err
	}
	return Diagnose(top, parking), top, nil
}

// HasErrors reports whether any finding is of error severity.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

func severityRank(s string) int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ra, rb := severityRank(a.Severity), severityRank(b.Severity); ra != rb {
			return ra < rb
		}
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Exchange < b.Exchange
	})
}

// doctor answers the questions every check asks of one topology.
type doctor struct {
	t        triage.Topology
	r        *triage.Router
	queues   []triage.Queue // sorted by name, so findings come out in a stable order
	bindings map[string][]triage.Binding
	// alternates maps an exchange to its alternate exchange.
	alternates map[string]string
	reached    map[reachQuery][]string // reachKey's answers
	// arrivals are the routing keys each queue's messages can carry, and so
	// the keys its dead letters carry when it has no dead-letter routing key.
	arrivals map[string]keySet
}

func newDoctor(t triage.Topology) *doctor {
	d := &doctor{t: t, r: triage.NewRouter(t), bindings: map[string][]triage.Binding{}, alternates: map[string]string{}, reached: map[reachQuery][]string{}}
	for _, x := range t.Exchanges {
		if x.AlternateExchange != "" {
			d.alternates[x.Name] = x.AlternateExchange
		}
	}
	d.queues = append(d.queues, t.Queues...)
	sort.Slice(d.queues, func(i, j int) bool { return d.queues[i].Name < d.queues[j].Name })
	for _, b := range t.Bindings {
		if b.DestinationType == "queue" && b.Source != "" {
			d.bindings[b.Destination] = append(d.bindings[b.Destination], b)
		}
	}
	d.arrivals = make(map[string]keySet, len(t.Queues))
	for _, q := range d.queues {
		d.arrivals[q.Name] = d.bindingKeys(q)
	}
	d.settleArrivals()
	return d
}

// exists says whether the vhost has the exchange; "" (the default) always.
func (d *doctor) exists(exchange string) bool {
	if exchange == "" {
		return true
	}
	_, ok := d.r.ExchangeType(exchange)
	return ok
}

// queue is the named queue, or the zero queue when the topology lacks it.
func (d *doctor) queue(name string) triage.Queue {
	q, _ := d.r.Queue(name)
	return q
}

// exchangeType is the exchange's type, "" when the topology lacks it.
func (d *doctor) exchangeType(name string) string {
	kind, _ := d.r.ExchangeType(name)
	return kind
}

// deadLetters says whether the broker dead-letters from q at all: streams
// never do, and a queue without an effective DLX drops instead.
func deadLetters(q triage.Queue) bool {
	return q.HasDeadLetterExchange && q.Type != triage.QueueStream
}

// exchangeName shows "" as the default exchange.
func exchangeName(x string) string {
	if x == "" {
		return "the default exchange"
	}
	return "exchange " + x
}
