package e2e

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/triage/doctor"
)

// plantedQueue is one queue of a doctor test topology. policy, when set, is
// put (pattern ^name$) before the queue is declared, so the queue is born
// with it and the management API shows it at once.
type plantedQueue struct {
	name   string
	args   amqp.Table
	policy rabbithole.PolicyDefinition
	binds  [][2]string // exchange, routing key
}

// plant declares exchanges, policies and queues on cfg's vhost with plain
// amqp091-go and rabbit-hole, independently of the code under test. It
// returns the open connection, for consumers the test attaches before it
// waits for the management API (waitPolicies).
func plant(t *testing.T, cfg broker.Config, exchanges map[string]string, queues []plantedQueue) *amqp.Connection {
	t.Helper()
	rh := managementClient(t, cfg)
	for _, q := range queues {
		if q.policy == nil {
			continue
		}
		p := rabbithole.Policy{Pattern: "^" + regexp.QuoteMeta(q.name) + "$", ApplyTo: "queues", Definition: q.policy}
		if _, err := rh.PutPolicy(cfg.Vhost, "doctor-"+q.name, p); err != nil {
			t.Fatalf("policy for %s: %v", q.name, err)
		}
	}
	u, err := url.Parse(cfg.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawPath = "/"+cfg.Vhost, "/"+url.PathEscape(cfg.Vhost)
	conn, err := amqp.Dial(u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	for name, kind := range exchanges {
		if err := ch.ExchangeDeclare(name, kind, true, false, false, false, nil); err != nil {
			t.Fatalf("exchange %s: %v", name, err)
		}
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			t.Fatalf("queue %s: %v", q.name, err)
		}
		for _, b := range q.binds {
			if err := ch.QueueBind(q.name, b[1], b[0], false, nil); err != nil {
				t.Fatalf("bind %s to %s: %v", q.name, b[0], err)
			}
		}
	}
	return conn
}

// waitPolicies waits until the management API shows each planted queue with
// its policy: it reports a new queue's policy only with the queue's first
// stats, a few seconds after the declare.
func waitPolicies(t *testing.T, cfg broker.Config, queues []plantedQueue) {
	t.Helper()
	rh := managementClient(t, cfg)
	deadline := time.Now().Add(30 * time.Second)
	for {
		listed, err := rh.ListQueuesIn(cfg.Vhost)
		if err != nil {
			t.Fatal(err)
		}
		policy := map[string]string{}
		for _, q := range listed {
			policy[q.Name] = q.Policy
		}
		var off []string
		for _, q := range queues {
			if q.policy != nil && policy[q.name] != "doctor-"+q.name {
				off = append(off, q.name)
			}
		}
		if len(off) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the management API still shows no policy on %v", off)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func managementClient(t *testing.T, cfg broker.Config) *rabbithole.Client {
	t.Helper()
	u, err := url.Parse(cfg.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	rh, err := rabbithole.NewClient(cfg.MgmtURL, u.User.Username(), pass)
	if err != nil {
		t.Fatal(err)
	}
	return rh
}

// waitConsumers waits until the management API, which dlqt reads, counts
// the consumers of queue (its figures come from stats emitted every few
// seconds).
func waitConsumers(t *testing.T, cfg broker.Config, queue string, want int) {
	t.Helper()
	rh := managementClient(t, cfg)
	deadline := time.Now().Add(30 * time.Second)
	for {
		q, err := rh.GetQueue(cfg.Vhost, queue)
		if err == nil && q.Consumers == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("management API still shows %s with %v consumers (err %v), want %d", queue, q, err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// doctorJSON runs dlqt doctor --json and decodes its findings, whatever
// the exit status (1 when a finding is an error).
func doctorJSON(t *testing.T, env []string, args ...string) ([]doctor.Finding, result) {
	t.Helper()
	r := runDlqt(t, env, append([]string{"doctor", "--json"}, args...)...)
	var fs []doctor.Finding
	if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
		t.Fatalf("doctor --json printed no JSON array (exit %d): %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	return fs, r
}

func findingSummary(fs []doctor.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Severity + " " + f.Kind + " " + f.Queue
	}
	return out
}

// TestDoctorFindsEachPlantedBug builds every kind of finding on the real
// broker in one vhost and checks that dlqt doctor reports exactly those,
// with their severity and queue, and exits 1 because some are errors.
func TestDoctorFindsEachPlantedBug(t *testing.T) {
	t.Parallel() // most of its time is the management API catching up; the clean vhost's too
	cfg := brokertest.NewVhost(t, "doctor")
	dlx := func(x string) rabbithole.PolicyDefinition {
		return rabbithole.PolicyDefinition{"dead-letter-exchange": x}
	}
	queues := []plantedQueue{
		// Seed 001's two loops: a TTL queue and a plain one dead-lettering into themselves.
		{name: "loop.ttl", args: amqp.Table{"x-message-ttl": int32(60000)}, policy: dlx("loop.ttl.x"), binds: [][2]string{{"loop.ttl.x", "loop.ttl"}}},
		{name: "loop.reject", policy: dlx("loop.reject.x"), binds: [][2]string{{"loop.reject.x", "loop.reject"}}},
		// A broker-run retry: work's rejects wait in work.wait, whose DLX brings them back.
		{name: "work", policy: dlx("retry.x"), binds: [][2]string{{"work.x", "work"}}},
		{name: "work.wait", args: amqp.Table{"x-message-ttl": int32(5000)}, policy: dlx("work.x"), binds: [][2]string{{"retry.x", "work"}}},
		// Seed 002 common error 1: the bucket's key is a typo.
		{name: "work.retry.bad", args: amqp.Table{"x-message-ttl": int32(5000)},
			policy: rabbithole.PolicyDefinition{"dead-letter-exchange": "work.x", "dead-letter-routing-key": "wrok"}},
		{name: "orphan", policy: dlx("no.such.exchange")},
		// A topic DLX whose only binding is narrower than the keys that die.
		{name: "narrow.src", policy: dlx("narrow.dlx"), binds: [][2]string{{"events", "order.created"}}},
		{name: "narrow.dlq", binds: [][2]string{{"narrow.dlx", "payment.#"}}},
		{name: "capped", args: amqp.Table{"x-max-length": int32(10)}},
		{name: "graveyard.dlq", binds: [][2]string{{"graveyard", ""}}},
		{name: "aging.dlq", args: amqp.Table{"x-message-ttl": int32(86400000)}},
		{name: "quorum.dlq", args: amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3)}},
		{name: "argued", args: amqp.Table{"x-dead-letter-exchange": "graveyard"}},
	}
	conn := plant(t, cfg, map[string]string{
		"loop.ttl.x": "direct", "loop.reject.x": "direct",
		"work.x": "direct", "retry.x": "direct",
		"events": "direct", "narrow.dlx": "topic",
		"graveyard": "fanout",
	}, queues)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume("graveyard.dlq", "auto-janitor", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	waitPolicies(t, cfg, queues)
	waitConsumers(t, cfg, "graveyard.dlq", 1)

	env := brokerEnv(t, cfg)
	fs, r := doctorJSON(t, env)
	want := []string{
		"error dlx-cycle-infinite loop.reject",
		"error dlx-cycle-silent-drop loop.ttl",
		"error dlx-unroutable narrow.src",
		"error dlx-missing-exchange orphan",
		"error retry-route-mismatch work.retry.bad",
		"warning parking-loses-messages aging.dlq",
		"warning maxlen-without-dlx capped",
		"warning parking-has-consumers graveyard.dlq",
		"warning parking-loses-messages quorum.dlq",
		"warning dlx-cycle-infinite work",
		"advisory dlx-by-argument argued",
	}
	if got := findingSummary(fs); !slices.Equal(got, want) {
		t.Fatalf("findings on the planted vhost:\n  got  %q\n  want %q", got, want)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "5 error-severity finding(s)") {
		t.Fatalf("exit %d, stderr %q: want 1 and the count of errors", r.code, r.stderr)
	}
	exchangeOf := map[string]string{}
	for _, f := range fs {
		exchangeOf[f.Kind+" "+f.Queue] = f.Exchange
		if f.Detail == "" || f.Fix == "" || !strings.Contains(f.Detail, f.Queue) {
			t.Errorf("%s %s: the detail must name the queue and a fix must be given: %+v", f.Kind, f.Queue, f)
		}
	}
	for key, x := range map[string]string{
		"dlx-missing-exchange orphan":         "no.such.exchange",
		"dlx-unroutable narrow.src":           "narrow.dlx",
		"retry-route-mismatch work.retry.bad": "work.x",
		"dlx-cycle-silent-drop loop.ttl":      "loop.ttl.x",
		"dlx-by-argument argued":              "graveyard",
		"parking-has-consumers graveyard.dlq": "",
		"dlx-cycle-infinite loop.reject":      "loop.reject.x",
		"dlx-cycle-infinite work":             "retry.x",
		"parking-loses-messages quorum.dlq":   "",
		"maxlen-without-dlx capped":           "",
		"parking-loses-messages aging.dlq":    "",
	} {
		if got, ok := exchangeOf[key]; !ok || got != x {
			t.Errorf("%s: exchange %q (found %v), want %q", key, got, ok, x)
		}
	}

	// The same findings for a person: one block each, severity word first.
	human := runDlqt(t, env, "doctor")
	if human.code != 1 {
		t.Fatalf("doctor exit %d, want 1; stderr %s", human.code, human.stderr)
	}
	for _, line := range []string{
		"ERROR  dlx-cycle-silent-drop  queue loop.ttl  exchange loop.ttl.x",
		"WARNING  dlx-cycle-infinite  queue work  exchange retry.x",
		"ADVISORY  dlx-by-argument  queue argued  exchange graveyard",
		"  Fix: ",
	} {
		if !strings.Contains(human.stdout, line) {
			t.Errorf("human output lacks %q:\n%s", line, human.stdout)
		}
	}
	if got := strings.Count(human.stdout, "\n  Fix: "); got != len(want) {
		t.Errorf("human output has %d fixes for %d findings:\n%s", got, len(want), human.stdout)
	}
}

// TestDoctorPassesASoundTopology: a graveyard fanout DLX set by policy, an
// app-run retry bucket (seed 002) whose key reaches the work queue, a
// parking queue that keeps everything: no finding, exit 0.
func TestDoctorPassesASoundTopology(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t, "doctor-clean")
	queues := []plantedQueue{
		{name: "orders.main.q", policy: rabbithole.PolicyDefinition{"dead-letter-exchange": "orders.dlx"}, binds: [][2]string{{"orders.exchange", "orders"}}},
		{name: "orders.retry.2s.q", args: amqp.Table{"x-message-ttl": int32(2000)},
			policy: rabbithole.PolicyDefinition{"dead-letter-exchange": "orders.exchange", "dead-letter-routing-key": "orders"}},
		{name: "orders.dlq.q", binds: [][2]string{{"orders.dlx", ""}}},
		{name: "orders.capped", args: amqp.Table{"x-max-length": int32(100)}, policy: rabbithole.PolicyDefinition{"dead-letter-exchange": "orders.dlx"}},
	}
	plant(t, cfg, map[string]string{"orders.exchange": "direct", "orders.dlx": "fanout"}, queues)
	waitPolicies(t, cfg, queues)
	env := brokerEnv(t, cfg)
	fs, r := doctorJSON(t, env)
	if len(fs) != 0 || r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("a sound topology: exit %d, findings %q, stdout %s, stderr %s", r.code, findingSummary(fs), r.stdout, r.stderr)
	}
	human := runDlqt(t, env, "doctor")
	if human.code != 0 || !strings.Contains(human.stdout, "no findings") {
		t.Fatalf("exit %d, stdout %q", human.code, human.stdout)
	}
}

// The project's own scenarios (seeds 001 and 002, loaded on the broker and
// bundled as the demo) are sound: no cycle, nothing lost, so exit 0.
func TestDoctorOnTheScenariosFindsNoCycleAndNoError(t *testing.T) {
	cfg, _ := scenarioVhost(t)
	for _, src := range []struct {
		name string
		env  []string
		args []string
	}{
		{"broker", brokerEnv(t, cfg), nil},
		{"demo", isolatedEnv(t), []string{"--demo"}},
	} {
		fs, r := doctorJSON(t, src.env, src.args...)
		if r.code != 0 {
			t.Errorf("%s: exit %d, stderr %s", src.name, r.code, r.stderr)
		}
		sawParking := false
		for _, f := range fs {
			if f.Severity == doctor.SeverityError || f.Kind == doctor.KindCycleInfinite || f.Kind == doctor.KindCycleSilentDrop {
				t.Errorf("%s: unexpected finding %+v", src.name, f)
			}
			// payments.parking is a quorum queue with a delivery limit: browsing it costs.
			sawParking = sawParking || (f.Kind == doctor.KindParkingLoses && f.Queue == "payments.parking")
		}
		if !sawParking {
			t.Errorf("%s: no parking-loses-messages for payments.parking in %q", src.name, findingSummary(fs))
		}
	}
}

// The help lists every kind the doctor can report, and the exit status
// scripts rely on.
func TestDoctorHelpListsEveryKindAndTheExitStatus(t *testing.T) {
	r := runDlqt(t, isolatedEnv(t), "doctor", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		doctor.KindCycleSilentDrop, doctor.KindCycleInfinite, doctor.KindMissingExchange, doctor.KindUnroutable,
		doctor.KindMaxlenWithoutDLX, doctor.KindRetryRouteMismatch, doctor.KindParkingConsumers, doctor.KindParkingLoses,
		doctor.KindDLXByArgument, doctor.KindParkingByName,
		"Exit status: 0 when no finding is an error", "1 when at least one is",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor --help does not mention %q:\n%s", want, r.stdout)
		}
	}
}
