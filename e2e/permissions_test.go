package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A user with read permission only (the monitoring tag, no configure, no
// write) is told up front, by the broker's own judgement, what it cannot
// do: doctor lists each missing permission with the rabbitmqctl line,
// discard and replay refuse before anything is touched (not at the lease's
// ACCESS_REFUSED), and the TUI starts read-only saying why.
func TestAReadOnlyUserIsToldUpFrontWhatItCannotDo(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	var queue, group string
	for _, p := range scen.Parking {
		if p.DeliveryLimit == 0 && len(p.Groups()) > 0 {
			g := p.Groups()[0]
			queue, group = p.Queue, string(g.Reason)+"/"+g.ReasonCode
			break
		}
	}
	ro, user := brokertest.User(t, cfg, &brokertest.Perms{Configure: "", Write: "", Read: ".*"}, "monitoring")
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, ro), "DLQT_JOURNAL="+jpath)
	denial := "user " + user + " has no configure permission on the lease queues dlqt.lease.* in vhost " + cfg.Vhost

	t.Run("doctor", func(t *testing.T) {
		r := runDlqt(t, env, "doctor", "--json")
		var fs []struct{ Kind, Severity, Queue, Exchange, Detail, Fix string }
		if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
			t.Fatalf("doctor --json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		var lease, fullscan bool
		for _, f := range fs {
			if f.Kind != "permission-missing" {
				continue
			}
			if f.Severity != "warning" || !strings.Contains(f.Fix, "rabbitmqctl set_permissions -p "+cfg.Vhost+" "+user+` '^dlqt\.lease\.|^amq\.gen-'`) {
				t.Errorf("finding %+v: want a warning with the set_permissions line", f)
			}
			lease = lease || strings.HasPrefix(f.Detail, denial) && strings.HasSuffix(f.Detail, "it stops discard and replay.")
			fullscan = fullscan || strings.Contains(f.Detail, "no write permission on exchange amq.default") && strings.HasSuffix(f.Detail, "it stops fullscan.")
		}
		if !lease || !fullscan {
			t.Errorf("doctor: lease finding %v, fullscan finding %v, want both:\n%s", lease, fullscan, r.stdout)
		}
		r = runDlqt(t, env, "doctor")
		if !strings.Contains(r.stdout, "WARNING  permission-missing") || !strings.Contains(r.stdout, "    $ rabbitmqctl set_permissions -p "+cfg.Vhost+" "+user+" ") {
			t.Errorf("doctor's text shows no permission finding with its command:\n%s", r.stdout)
		}
	})

	t.Run("headless discard and replay refuse up front", func(t *testing.T) {
		depth := readyDepth(t, cfg, queue)
		for _, args := range [][]string{
			{"discard", queue, "--group", group, "--reason", "cleanup", "--yes"},
			{"replay", queue, "--group", group, "--yes"},
		} {
			r := runDlqt(t, env, args...)
			if r.code != 1 || r.stdout != "" {
				t.Errorf("%v: exit %d, stdout %q: want exit 1 and nothing on stdout", args, r.code, r.stdout)
			}
			assertOneLine(t, r.stderr, args[0]+" refused: "+denial, "nothing was touched", "rabbitmqctl set_permissions")
			if strings.Contains(r.stderr, "ACCESS_REFUSED -") {
				t.Errorf("%v: the broker's refusal of the action itself reached the user: %s", args, r.stderr)
			}
		}
		if got := readyDepth(t, cfg, queue); got != depth {
			t.Errorf("%s: %d ready after the refusals, want %d", queue, got, depth)
		}
	})

	t.Run("the TUI starts read-only with the reason", func(t *testing.T) {
		s := startTerm(t, 200, 30, env)
		s.waitFor("note: read-only: "+denial, "grant it:", "set_permissions -p "+cfg.Vhost+" "+user)
		s.keys("x") // discard's key
		s.waitFor("discard is off: " + denial)
		if scr := s.screen(); strings.Contains(scr, "x discard") {
			t.Errorf("help still offers discard:\n%s", scr)
		}
	})
}

// A user with what the README asks for has no permission finding; one
// whose regex Go cannot read (a lookahead) is said to be unchecked, never
// judged on a guess.
func TestDoctorPermissionFindingsForGrantedAndUncheckedUsers(t *testing.T) {
	cfg, _ := scenarioVhost(t)
	findings := func(t *testing.T, perms brokertest.Perms, tag string) map[string]string {
		as, _ := brokertest.User(t, cfg, &perms, tag)
		r := runDlqt(t, brokerEnv(t, as), "doctor", "--json")
		var fs []struct{ Kind, Detail string }
		if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, r.stderr)
		}
		kinds := map[string]string{}
		for _, f := range fs {
			if strings.HasPrefix(f.Kind, "permission") {
				kinds[f.Kind] = f.Detail
			}
		}
		return kinds
	}
	if got := findings(t, brokertest.Perms{Configure: `^dlqt\.lease\.|^amq\.gen-`, Write: ".*", Read: ".*"}, "management"); len(got) != 0 {
		t.Errorf("a user granted what dlqt needs: %v", got)
	}
	got := findings(t, brokertest.Perms{Configure: `^(?!amq\.)dlqt\.`, Write: ".*", Read: ".*"}, "administrator")
	if _, missing := got["permission-missing"]; missing || !strings.HasPrefix(got["permissions-unchecked"], "could not check the configure permission") {
		t.Errorf("a lookahead regex: %v, want only permissions-unchecked", got)
	}
}

// A user who may take the lease and write to some destinations (the
// default exchange), but not to the one a replay's plan publishes to
// (exchange orders), is refused after the plan is shown and before
// anything is held or published. Its own vhost: a replay that went ahead
// would change no other test's messages.
func TestReplayRefusesADestinationTheUserMayNotWriteTo(t *testing.T) {
	cfg := deadLetteredOrder(t)
	as, user := brokertest.User(t, cfg, &brokertest.Perms{Configure: `^dlqt\.lease\.|^amq\.gen-`, Write: `^amq\.gen-|^amq\.default$`, Read: ".*"}, "management")
	env := append(brokerEnv(t, as), "DLQT_JOURNAL="+filepath.Join(t.TempDir(), "journal.db"))
	r := runDlqt(t, env, "replay", "orders.dlq", "--group", "rejected", "--yes")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	assertOneLine(t, r.stderr, "replay refused: user "+user+" has no write permission on exchange orders (a replay publishes back to it)", "nothing was touched",
		`rabbitmqctl set_permissions -p `+cfg.Vhost+" "+user+` '^dlqt\.lease\.|^amq\.gen-' '^amq\.gen-|^amq\.default$|^orders$' '.*'`)
	if !strings.Contains(r.stdout, "orders.dlq") { // the plan's own check, not the one at the lease
		t.Errorf("the plan was not shown before the refusal:\n%s", r.stdout)
	}
	if got := readyDepth(t, cfg, "orders.dlq"); got != 1 {
		t.Errorf("orders.dlq: %d ready after the refusal, want 1", got)
	}
}

// deadLetteredOrder is a vhost of the test's own where exchange orders
// feeds queue orders and plain is reached only by name; both dead-letter
// through orders.dlx into orders.dlq, which holds one order rejected there.
func deadLetteredOrder(t *testing.T) broker.Config {
	cfg := brokertest.NewVhost(t, "perms-dest")
	ch, err := brokertest.Dial(t, cfg).Channel()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []string{"orders", "orders.dlx"} {
		if err := ch.ExchangeDeclare(x, "direct", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	// orders is reached through exchange orders, plain only by its name
	for _, q := range []string{"orders", "plain"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-dead-letter-exchange": "orders.dlx"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ch.QueueDeclare("orders.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][2]string{{"orders", "orders"}, {"orders.dlq", "orders.dlx"}} {
		if err := ch.QueueBind(b[0], "orders", b[1], false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Publish("orders", "orders", false, false, amqp.Publishing{MessageId: "m-1", Body: []byte(`{"order":1}`)}); err != nil {
		t.Fatal(err)
	}
	d, ok, err := ch.Get("orders", false)
	for i := 0; !ok && err == nil && i < 50; i++ {
		time.Sleep(20 * time.Millisecond)
		d, ok, err = ch.Get("orders", false)
	}
	if !ok || err != nil {
		t.Fatalf("get: %v %v", ok, err)
	}
	if err := d.Nack(false, false); err != nil { // dead-lettered into orders.dlq
		t.Fatal(err)
	}
	waitReady(t, cfg, "orders.dlq", 1)

	return cfg
}

// The TUI's replay checks the plan's destinations before it holds
// anything: the refusal is on the replay screen, the queue keeps its
// message.
func TestTUIReplayRefusesADestinationTheUserMayNotWriteTo(t *testing.T) {
	cfg := deadLetteredOrder(t)
	as, user := brokertest.User(t, cfg, &brokertest.Perms{Configure: `^dlqt\.lease\.|^amq\.gen-`, Write: `^amq\.gen-|^amq\.default$`, Read: ".*"}, "management")
	env := append(brokerEnv(t, as), "DLQT_JOURNAL="+filepath.Join(t.TempDir(), "journal.db"))
	s := startTerm(t, 200, 40, env, "--queue", "orders.dlq")
	s.waitFor("the only message", "rejected") // the read is over: R during it says "nothing is read yet"
	s.keys("R")
	s.waitFor("dry run")
	s.keys("Enter")
	s.keys("y")
	s.waitFor("replay refused: user " + user + " has no write permission on exchange orders")
	if got := readyDepth(t, cfg, "orders.dlq"); got != 1 {
		t.Errorf("orders.dlq: %d ready after the refusal, want 1", got)
	}
}
