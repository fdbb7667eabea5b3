package broker_test

import (
	"context"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// permsFixture is a vhost where exchange orders feeds queue orders, which
// dead-letters into the parking queue orders.dlq through exchange orders.dlx.
func permsFixture(t *testing.T) *fixture {
	f := newFixture(t, "perms")
	for _, x := range []string{"orders", "orders.dlx"} {
		if err := f.ch.ExchangeDeclare(x, "direct", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.declare("orders", amqp.Table{"x-dead-letter-exchange": "orders.dlx"})
	f.declare("orders.dlq", nil)
	for _, b := range [][2]string{{"orders", "orders"}, {"orders.dlq", "orders.dlx"}} {
		if err := f.ch.QueueBind(b[0], "orders", b[1], false, nil); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// The permission check's verdicts, for users made with exactly those
// permissions: an administrator's regexes are read and matched, anyone
// else's are tried on the broker; both give the same verdicts, and each
// verdict is what the broker then does (a lease is refused exactly when
// the check said discard would be).
func TestPermissionCheckVerdicts(t *testing.T) {
	f := permsFixture(t)
	recommended := brokertest.Perms{Configure: `^dlqt\.lease\.|^amq\.gen-`, Write: `^amq\.gen-|^orders$|^amq\.default$`, Read: ".*"}
	readOnly := brokertest.Perms{Configure: "", Write: "", Read: ".*"}
	leaseOnly := brokertest.Perms{Configure: `^dlqt\.lease\.`, Write: "^$", Read: ".*"}
	noDest := brokertest.Perms{Configure: `^dlqt\.lease\.|^amq\.gen-`, Write: `^amq\.gen-`, Read: ".*"}
	noWatchRead := brokertest.Perms{Configure: `^dlqt\.lease\.|^amq\.gen-`, Write: `.*`, Read: `^orders\.dlq$|^amq\.gen-`}
	cases := []struct {
		name  string
		tag   string
		perms brokertest.Perms
		// what each feature's denial says ("" allowed)
		discard, replay, fullscan string
		writesOrders              bool // a plan's destination: PublishPermissions
	}{
		{"recommended, tried", "management", recommended, "", "", "", true},
		{"recommended, read", "administrator", recommended, "", "", "", true},
		{"read-only, tried", "monitoring", readOnly, "no configure permission on the lease queues dlqt.lease.*", "no configure permission on the lease queues", "no write permission on exchange amq.default", false},
		{"read-only, read", "administrator", readOnly, `no configure permission on the lease queue dlqt.lease.orders.dlq in vhost`, "no configure permission on the lease queue", `its write regex is ""`, false},
		{"lease only, tried", "management", leaseOnly, "", "no configure permission on server-named queues amq.gen-*", "no write permission on exchange amq.default", false},
		{"lease only, read", "administrator", leaseOnly, "", `no configure permission on server-named queues amq.gen-*`, "amq.default", false},
		{"no destination, tried", "management", noDest, "", "no write permission on exchange orders (a replay publishes back to it)", "amq.default", false},
		{"no destination, read", "administrator", noDest, "", "no write permission on exchange orders", "amq.default", false},
		{"no read on the watched exchange, tried", "management", noWatchRead, "", "no read permission on exchange orders.dlx", "", true},
		{"no read on the watched exchange, read", "administrator", noWatchRead, "", "no read permission on exchange orders.dlx", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, user := brokertest.User(t, f.cfg, &tc.perms, tc.tag)
			l, err := broker.Dial(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			top, err := l.Topology(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			p := l.Permissions(context.Background(), top, nil)
			if len(p.Unchecked) > 0 {
				t.Errorf("unchecked: %q", p.Unchecked)
			}
			if read := tc.tag == "administrator"; (p.Regexes != nil) != read {
				t.Errorf("regexes read = %v, want %v", p.Regexes != nil, read)
			}
			for feature, want := range map[string]string{broker.FeatureDiscard: tc.discard, broker.FeatureReplay: tc.replay, broker.FeatureFullScan: tc.fullscan} {
				got := p.Denied(feature)
				switch {
				case want == "" && got != "":
					t.Errorf("%s denied: %s", feature, got)
				case want != "" && !strings.Contains(got, want):
					t.Errorf("%s: denial %q, want it to say %q", feature, got, want)
				case want != "" && !strings.Contains(got, "user "+user+" ") || want != "" && !strings.Contains(got, "vhost "+f.cfg.Vhost):
					t.Errorf("%s: denial %q names neither the user nor the vhost", feature, got)
				}
			}
			pp := l.PublishPermissions(context.Background(), []string{"orders"})
			if got := pp.Denied(broker.FeatureReplay); (got == "") != tc.writesOrders || !tc.writesOrders && !strings.Contains(got, "no write permission on exchange orders") {
				t.Errorf("a plan to exchange orders: denial %q, want one: %v", got, !tc.writesOrders)
			}
			// the verdict is the broker's: the lease is refused exactly when discard is denied
			ls, err := l.TakeLease(context.Background(), "orders.dlq", "discarding from")
			if refused := err != nil && strings.Contains(err.Error(), "ACCESS_REFUSED"); refused != (tc.discard != "") {
				t.Errorf("TakeLease: %v, but the check said discard denied = %q", err, tc.discard)
			}
			_ = ls.Release()
			if len(p.Gaps) > 0 && !strings.HasPrefix(p.Fix(), "rabbitmqctl set_permissions -p "+f.cfg.Vhost+" "+user+" ") {
				t.Errorf("fix: %s", p.Fix())
			}
		})
	}
}

// A regex Go's RE2 cannot read (a lookahead, valid for Erlang's re) leaves
// that permission unchecked: never a guessed denial.
func TestPermissionRegexGoCannotReadIsUncheckedNotDenied(t *testing.T) {
	f := permsFixture(t)
	cfg, _ := brokertest.User(t, f.cfg, &brokertest.Perms{Configure: `^(?!amq\.gen-)dlqt\.`, Write: ".*", Read: ".*"}, "administrator")
	l, err := broker.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := l.Permissions(context.Background(), top, nil)
	if why := p.Denied(broker.FeatureDiscard); why != "" {
		t.Errorf("discard denied on a guess: %s", why)
	}
	if len(p.Unchecked) != 1 || !strings.Contains(p.Unchecked[0], "could not check the configure permission") {
		t.Errorf("unchecked = %q", p.Unchecked)
	}
	// and the broker itself accepts the lease
	ls, err := l.TakeLease(context.Background(), "orders.dlq", "discarding from")
	if err != nil {
		t.Fatalf("TakeLease: %v", err)
	}
	_ = ls.Release()
}

// Topic permissions judge a publish's routing key: the probe's key is not
// a replay's, so a topic refusal leaves the exchange unchecked, never
// denied on a guess.
func TestTopicPermissionsLeaveTheDestinationUnchecked(t *testing.T) {
	f := permsFixture(t)
	if err := f.ch.ExchangeDeclare("events", "topic", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.ch.QueueBind("orders", "orders.#", "events", false, nil); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"management", "administrator"} { // tried, and read
		t.Run(tag, func(t *testing.T) { topicPermissionsUnchecked(t, f, tag) })
	}
}

func topicPermissionsUnchecked(t *testing.T, f *fixture, tag string) {
	cfg, user := brokertest.User(t, f.cfg, &brokertest.Perms{Configure: `^dlqt\.lease\.|^amq\.gen-`, Write: ".*", Read: ".*"}, tag)
	rh := f.management()
	if _, err := rh.UpdateTopicPermissionsIn(f.cfg.Vhost, user, rabbithole.TopicPermissions{Exchange: "events", Write: `^orders\.`, Read: ".*"}); err != nil {
		t.Fatal(err)
	}
	l, err := broker.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	top, err := l.Topology(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := l.Permissions(context.Background(), top, nil)
	if why := p.Denied(broker.FeatureReplay); why != "" || len(p.Gaps) != 0 {
		t.Errorf("replay denied on a guess: %q (gaps %+v)", why, p.Gaps)
	}
	if len(p.Unchecked) != 1 || !strings.Contains(p.Unchecked[0], "exchange events: topic permissions") {
		t.Errorf("unchecked = %q", p.Unchecked)
	}
}
