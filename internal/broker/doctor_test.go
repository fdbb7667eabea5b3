package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
)

// TestDoctorOnTheBroker reads a topology whose settings come from policies
// (TTL, length limit, overflow, dead-letter exchange and routing key)
// through Live.Topology, diagnoses it, and then makes messages travel the
// two seed 001 loops to show the broker does what the findings say: the TTL
// loop drops its message silently, the reject loop keeps it forever.
func TestDoctorOnTheBroker(t *testing.T) {
	f := newFixture(t, "doctor")
	rh := f.management()
	policies := map[string]rabbithole.PolicyDefinition{
		// Two queues that only expire or overflow, dead-lettering into each other.
		`^pair\.a$`: {"dead-letter-exchange": "pair.b.x", "message-ttl": 60000},
		`^pair\.b$`: {"dead-letter-exchange": "pair.a.x", "max-length": 5},
		// reject-publish refuses instead of dropping: no maxlen finding.
		`^refusing$`: {"max-length": 5, "overflow": "reject-publish"},
		`^dropping$`: {"max-length": 5},
		// The dead-letter routing key names a queue that does not exist.
		`^misrouted$`: {"dead-letter-exchange": "", "dead-letter-routing-key": "no.such.queue"},
		`^held\.dlq$`: {"message-ttl": 86400000, "max-length": 1000},
		// Dead letters that a DLX routes nowhere go to its alternate exchange.
		`^ae\.src$`:  {"dead-letter-exchange": "ae.dlx"},
		`^pol\.src$`: {"dead-letter-exchange": "pol.dlx"},
	}
	i := 0
	for pattern, def := range policies {
		i++
		if _, err := rh.PutPolicy(f.cfg.Vhost, fmt.Sprintf("p%d", i), rabbithole.Policy{Pattern: pattern, ApplyTo: "queues", Definition: def}); err != nil {
			t.Fatalf("policy %s: %v", pattern, err)
		}
	}
	if _, err := rh.PutPolicy(f.cfg.Vhost, "ae", rabbithole.Policy{Pattern: `^pol\.dlx$`, ApplyTo: "exchanges", Definition: rabbithole.PolicyDefinition{"alternate-exchange": "ae.catch"}}); err != nil {
		t.Fatal(err)
	}
	// loop.qq gets an exchange of its own: FindParkingQueues follows a DLX
	// without a routing key to every queue bound to it, whatever the key.
	for _, x := range []string{"pair.a.x", "pair.b.x", "loops", "loops.qq", "pol.dlx"} {
		if err := f.ch.ExchangeDeclare(x, "direct", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.ch.ExchangeDeclare("ae.dlx", "direct", true, false, false, false, amqp.Table{"alternate-exchange": "ae.catch"}); err != nil {
		t.Fatal(err)
	}
	if err := f.ch.ExchangeDeclare("ae.catch", "fanout", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("ae.src", nil)
	f.declare("pol.src", nil)
	f.declare("ae.caught", nil)
	f.declare("pair.a", nil)
	f.declare("pair.b", nil)
	f.declare("refusing", nil)
	f.declare("dropping", nil)
	f.declare("misrouted", nil)
	f.declare("held.dlq", nil)
	// Seed 001's loops, declared as the article does: by argument. The
	// witness shares the TTL loop's key, so it gets a copy of every lap.
	f.declare("loop.ttl", amqp.Table{"x-message-ttl": int32(50), "x-dead-letter-exchange": "loops"})
	f.declare("loop.witness", nil)
	f.declare("loop.reject", amqp.Table{"x-dead-letter-exchange": "loops"})
	// A quorum queue whose consumer requeues: its delivery_limit death is
	// no rejection either.
	f.declare("loop.qq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(1), "x-dead-letter-exchange": "loops.qq"})
	f.declare("loop.qq.witness", nil)
	for _, b := range []struct{ q, x, key string }{
		{"pair.a", "pair.a.x", "a"}, {"pair.b", "pair.b.x", "a"},
		{"ae.caught", "ae.catch", ""},
		{"loop.ttl", "loops", "loop.ttl"}, {"loop.witness", "loops", "loop.ttl"}, {"loop.reject", "loops", "loop.reject"},
		{"loop.qq", "loops.qq", "loop.qq"}, {"loop.qq.witness", "loops.qq", "loop.qq"},
	} {
		if err := f.ch.QueueBind(b.q, b.key, b.x, false, nil); err != nil {
			t.Fatal(err)
		}
	}

	live := f.live()
	var top triage.Topology
	withPolicy := []string{"pair.a", "pair.b", "refusing", "dropping", "misrouted", "held.dlq", "ae.src", "pol.src"}
	eventually(t, "the management API shows every queue's policy", func() string {
		var err error
		if top, err = live.Topology(context.Background()); err != nil {
			return err.Error()
		}
		for _, name := range withPolicy {
			if q, ok := top.Queue(name); !ok || q.Policy == "" {
				return name + " has no policy yet"
			}
		}
		return ""
	})

	for _, x := range top.Exchanges {
		if (x.Name == "ae.dlx" || x.Name == "pol.dlx") && x.AlternateExchange != "ae.catch" {
			t.Errorf("exchange %s: alternate exchange %q, want ae.catch (by argument, by policy)", x.Name, x.AlternateExchange)
		}
	}
	var got []string
	for _, fd := range doctor.Diagnose(top, triage.FindParkingQueues(top, nil)) {
		got = append(got, fd.Severity+" "+fd.Kind+" "+fd.Queue)
	}
	want := []string{
		"error dlx-cycle-silent-drop loop.qq",
		"error dlx-cycle-infinite loop.reject",
		"error dlx-cycle-silent-drop loop.ttl",
		"error dlx-unroutable misrouted",
		"error dlx-cycle-silent-drop pair.a",
		"warning maxlen-without-dlx dropping",
		"warning parking-loses-messages held.dlq",
		"advisory dlx-by-argument loop.qq",
		"advisory dlx-by-argument loop.reject",
		"advisory dlx-by-argument loop.ttl",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("findings:\n  got  %q\n  want %q", got, want)
	}

	// The TTL loop: published straight to loop.ttl (so the witness has no
	// copy of its own), the message expires and its dead letter is routed to
	// loop.ttl and loop.witness. The broker drops loop.ttl's copy at once,
	// since the message already expired there: the witness gets one copy,
	// never a second lap.
	f.publishOne("", "loop.ttl", amqp.Publishing{MessageId: "ttl-1", Body: []byte("x")})
	eventually(t, "the TTL loop's dead letter reaches the witness", func() string {
		if w, l := f.depth("loop.witness"), f.depth("loop.ttl"); w != 1 || l != 0 {
			return fmt.Sprintf("witness %d, loop.ttl %d", w, l)
		}
		return ""
	})
	time.Sleep(10 * 50 * time.Millisecond) // ten TTLs: time for more laps, had the broker kept it
	if w, l := f.depth("loop.witness"), f.depth("loop.ttl"); w != 1 || l != 0 {
		t.Fatalf("after ten TTLs: witness %d, loop.ttl %d; want 1 and 0 (dropped silently)", w, l)
	}

	// The quorum loop: requeued past its delivery limit, the message dies
	// with reason delivery_limit; the witness gets that dead letter and
	// loop.qq's copy is dropped at once.
	f.publishOne("", "loop.qq", amqp.Publishing{MessageId: "qq-1", Body: []byte("x")})
	qch, err := f.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	qds, err := qch.Consume("loop.qq", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for lap := 0; lap < 2; lap++ {
		select {
		case d := <-qds:
			// A reject counts on every version; from 4.3 a Nack no longer does.
			if err := d.Reject(true); err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("requeue %d: the message did not come back", lap)
		}
	}
	eventually(t, "the delivery-limit dead letter reaches the witness", func() string {
		if w := f.depth("loop.qq.witness"); w != 1 {
			return fmt.Sprintf("witness %d", w)
		}
		return ""
	})
	select {
	case d := <-qds:
		t.Fatalf("loop.qq got its dead letter back (x-death %v): the broker was expected to drop it", d.Headers["x-death"])
	case <-time.After(500 * time.Millisecond): // routed with the witness's copy, it would be here by now
	}
	qch.Close()

	// The reject loop: each rejection brings the message straight back with
	// one more rejected death; it never leaves.
	f.publishOne("loops", "loop.reject", amqp.Publishing{MessageId: "rej-1", Body: []byte("x")})
	ch, err := f.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume("loop.reject", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for lap := int64(0); lap < 4; lap++ {
		var d amqp.Delivery
		select {
		case d = <-deliveries:
		case <-time.After(10 * time.Second):
			t.Fatalf("lap %d: the rejected message did not come back", lap)
		}
		if got := rejectedCount(d.Headers, "loop.reject"); got != lap {
			t.Fatalf("lap %d: x-death count for loop.reject rejected = %d", lap, got)
		}
		if err := d.Nack(false, false); err != nil {
			t.Fatal(err)
		}
	}
}

// rejectedCount reads the x-death count of {queue, rejected}; 0 when absent.
func rejectedCount(h amqp.Table, queue string) int64 {
	deaths, _ := h["x-death"].([]any)
	for _, e := range deaths {
		d, _ := e.(amqp.Table)
		if d["queue"] == queue && d["reason"] == "rejected" {
			n, _ := d["count"].(int64)
			return n
		}
	}
	return 0
}
