// Package demo makes realistic messages die for real on a broker, for
// `dlqt demo load`, the bundled demo snapshot and the tests of every layer:
// broker dead-lettering (rejected, expired, maxlen, delivery_limit) into
// parking queues, application-managed retries through TTL buckets into a
// DLQ, and fault messages that frameworks publish themselves. It sets the
// broker up with plain AMQP and the management API; dlqt's read path never
// imports it.
package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// Markers planted in the scenario messages. They are fixed so that tests at
// every layer can assert that a secret never leaves the redactor and that an
// escape sequence never reaches the screen.
const (
	ScenarioSecret      = "hunter2-dlqt-scenario-password" // a "password" field and a plain-text password=
	ScenarioAPIKey      = "sk_live_dlqtScenarioKey7Hq2ZxW9"
	ScenarioCard        = "4111 1111 1111 1111" // passes Luhn
	ScenarioEmail       = "jane.doe.dlqt@example.com"
	ScenarioBearerToken = "dlqtScenarioBearer0pq9Xk3LmT" // sent as "Authorization: Bearer <token>"
	ScenarioJWT         = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		"eyJzdWIiOiJjdXNfMTA0MiIsInNjb3BlIjoiYmlsbGluZzpwb3J0YWwiLCJpYXQiOjE3OTAwMDAwMDB9." +
		"ZGxxdC1zY2VuYXJpby1zaWduYXR1cmUtMDAwMQ"

	ScenarioEscape       = "\x1b]0;pwned\x07" // OSC: would retitle the terminal
	ScenarioClear        = "\x1b[2J"          // CSI: would clear the screen
	ScenarioHeaderEscape = "\x1b[31;1m"       // CSI colour, in a header value
	ScenarioBidi         = "\u202e"           // right-to-left override, in a header value
)

// Scenarios describes what LoadScenarios produced, for tests to assert on.
type Scenarios struct {
	Vhost   string
	Parking []ParkingScenario // the parking queues, in a fixed order
	// NotParking are queues that must not be taken for parking queues: work
	// queues, retry buckets and the work queue the buckets feed.
	NotParking []string
	Depths     map[string]int // every scenario queue's depth once settled
	Secrets    []string       // must never appear in a redacted payload
	Hostile    []string       // must never reach a terminal
}

// ParkingScenario is one parking queue and the messages this call put in it.
type ParkingScenario struct {
	Queue            string
	Type             string // triage.QueueClassic or triage.QueueQuorum
	DeliveryLimit    int64  // 0 = none
	DeadLetteredFrom []string
	Messages         []Produced
}

// Produced is one message as it should be understood once parked.
type Produced struct {
	MessageID  string // AMQP message_id; "" for the messages that have none
	Reason     triage.Reason
	ReasonCode string
	EventType  string      // "" when the body is not an envelope
	Deaths     []DeathStep // x-death entries the broker must have written
	RetryCount int         // x-retry-count carried by the application, 0 if none
}

// DeathStep is one {queue, reason} x-death entry.
type DeathStep struct {
	Queue  string
	Reason triage.Reason
}

// GroupCount is the size of one (reason, reason_code) group.
type GroupCount struct {
	Reason     triage.Reason
	ReasonCode string
	Count      int
}

// Groups counts the messages of p by (reason, reason_code), sorted by reason
// then code.
func (p ParkingScenario) Groups() []GroupCount {
	var gs []GroupCount
	for _, m := range p.Messages {
		i := slices.IndexFunc(gs, func(g GroupCount) bool { return g.Reason == m.Reason && g.ReasonCode == m.ReasonCode })
		if i < 0 {
			gs = append(gs, GroupCount{Reason: m.Reason, ReasonCode: m.ReasonCode})
			i = len(gs) - 1
		}
		gs[i].Count++
	}
	slices.SortFunc(gs, func(a, b GroupCount) int {
		if c := strings.Compare(string(a.Reason), string(b.Reason)); c != 0 {
			return c
		}
		return strings.Compare(a.ReasonCode, b.ReasonCode)
	})
	return gs
}

// MessageIDs lists the message ids of p, skipping the messages that have none.
func (p ParkingScenario) MessageIDs() []string {
	var ids []string
	for _, m := range p.Messages {
		if m.MessageID != "" {
			ids = append(ids, m.MessageID)
		}
	}
	return ids
}

// Queue finds a parking scenario by queue name.
func (s Scenarios) Queue(name string) (ParkingScenario, bool) {
	for _, p := range s.Parking {
		if p.Queue == name {
			return p, true
		}
	}
	return ParkingScenario{}, false
}

// settleTimeout bounds a whole LoadScenarios call. The flows settle in about
// a second (the slowest waits 100+200+300 ms in retry buckets); the
// management API then needs up to one stats round (5 s, more for a new
// quorum queue) to show it.
const settleTimeout = 30 * time.Second

// LoadScenarios declares the scenario topologies in cfg.Vhost (which must exist)
// and makes messages die there for real: the broker rejects, expires, drops
// at max-length and enforces a quorum delivery limit; a consumer retries
// through TTL buckets; applications park fault messages directly. It
// returns once every flow has settled: expected depths reached, every
// consumer cancelled, connections closed, and the management API showing it
// all (dlqt reads the topology there).
//
// It is not idempotent: a second call on the same vhost publishes another
// identical set (same message ids), so parking queues hold each message twice
// and the max-length queue pushes out the previous call's leftovers too.
// Scenarios then describes this call's messages only; Depths is always the
// observed total. Tests use a fresh vhost.
func LoadScenarios(ctx context.Context, cfg broker.Config) (Scenarios, error) {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()

	if err := putScenarioPolicy(cfg); err != nil {
		return Scenarios{}, err
	}
	conn, err := cfg.DialVhost()
	if err != nil {
		return Scenarios{}, fmt.Errorf("scenarios: connect to vhost %q: %w", cfg.Vhost, err)
	}
	defer conn.Close()

	if err := declareScenarioTopology(conn); err != nil {
		return Scenarios{}, err
	}
	depths, err := newDepthProbe(conn)
	if err != nil {
		return Scenarios{}, err
	}
	defer depths.close()
	base, err := depths.all(scenarioQueues())
	if err != nil {
		return Scenarios{}, err
	}

	flows := []scenarioFlow{billingFlow, paymentsFlow, ordersFlow, legacyFlow}
	results := make(chan flowResult, len(flows))
	for _, f := range flows {
		go func() {
			e, err := newFlowEnv(conn, base)
			if err != nil {
				results <- flowResult{err: err}
				return
			}
			defer e.close()
			out, err := f(ctx, e)
			results <- flowResult{out, err}
		}()
	}
	var parked []ParkingScenario
	want := map[string]int{}
	var firstErr error
	for range flows {
		r := <-results
		if r.err != nil && firstErr == nil {
			firstErr = r.err
			cancel() // stop the other flows early
		}
		parked = append(parked, r.out.parked...)
		maps.Copy(want, r.out.depths)
	}
	if firstErr != nil {
		return Scenarios{}, fmt.Errorf("scenarios in vhost %q: %w", cfg.Vhost, firstErr)
	}

	got, err := depths.settle(ctx, want)
	if err != nil {
		return Scenarios{}, fmt.Errorf("scenarios in vhost %q did not settle: %w", cfg.Vhost, err)
	}
	if err := waitManagementView(ctx, cfg, got); err != nil {
		return Scenarios{}, fmt.Errorf("scenarios in vhost %q: %w", cfg.Vhost, err)
	}
	slices.SortFunc(parked, func(a, b ParkingScenario) int {
		return slices.Index(parkingOrder, a.Queue) - slices.Index(parkingOrder, b.Queue)
	})
	return Scenarios{
		Vhost:      cfg.Vhost,
		Parking:    parked,
		NotParking: notParking(),
		Depths:     got,
		Secrets:    []string{ScenarioSecret, ScenarioAPIKey, ScenarioCard, ScenarioEmail, ScenarioBearerToken, ScenarioJWT},
		Hostile:    []string{ScenarioEscape, ScenarioClear, ScenarioHeaderEscape, ScenarioBidi},
	}, nil
}

// scenarioFlow publishes one scenario's messages, runs its consumers until the
// broker has dead-lettered what it should, and reports what it parked.
type scenarioFlow func(ctx context.Context, e *flowEnv) (flowOutcome, error)

// flowEnv is what every flow works with: the connection, a confirming
// publisher and a depth probe of its own (flows run concurrently), every
// queue's depth before the flows started, and one clock reading.
type flowEnv struct {
	conn  *amqp.Connection
	pub   *confirmPublisher
	probe *depthProbe
	base  map[string]int
	now   time.Time
}

func newFlowEnv(conn *amqp.Connection, base map[string]int) (*flowEnv, error) {
	pub, err := newPublisher(conn)
	if err != nil {
		return nil, err
	}
	probe, err := newDepthProbe(conn)
	if err != nil {
		pub.close()
		return nil, err
	}
	return &flowEnv{conn: conn, pub: pub, probe: probe, base: base, now: time.Now().UTC().Truncate(time.Second)}, nil
}

func (e *flowEnv) close() {
	e.probe.close()
	e.pub.close()
}

// flowOutcome is what one flow parked and the depth each queue it touched
// must settle at.
type flowOutcome struct {
	parked []ParkingScenario
	depths map[string]int
}

type flowResult struct {
	out flowOutcome
	err error
}
