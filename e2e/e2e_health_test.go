package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// End-to-end for issue 4's screens on the real broker: queue health while a
// producer dead-letters, the doctor with a planted bug, and the filter bar
// with a field expression narrowing a real queue's groups.

// healthRow reads the queues screen's row of orders.parking: state, queue,
// depth, in/s, trend (blocks and spaces), oldest, consumers, sources.
var healthRow = regexp.MustCompile(`(?m)^[› ] (ok|WARN|CRIT)\s+orders\.parking\s+([\d,]+)\s+([\d.]+k?)\s+([▁▂▃▄▅▆▇█ ]*?)\s+(\S+)\s+(\d+)\s+(.*)$`)

const sparkChars = "▁▂▃▄▅▆▇█"

func TestTUIQueueHealthDoctorAndFieldFilterOnTheBroker(t *testing.T) {
	cfg := brokertest.NewVhost(t, "tui-health")
	conn := plant(t, cfg, map[string]string{"work.dlx": "fanout"}, []plantedQueue{
		{name: "orders.parking", binds: [][2]string{{"work.dlx", ""}}},
		// a short TTL: everything published here dead-letters as expired
		{name: "orders.work", args: amqp.Table{"x-message-ttl": int32(100), "x-dead-letter-exchange": "work.dlx"}},
		// rejected by the test below: a second group in the parking queue
		{name: "orders.checkout", args: amqp.Table{"x-dead-letter-exchange": "work.dlx"}},
		// the planted bug: a DLX that does not exist
		{name: "billing.work", args: amqp.Table{"x-dead-letter-exchange": "billing.missing"}},
	})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	publish := func(ch *amqp.Channel, queue, id string) error {
		return ch.Publish("", queue, false, false, amqp.Publishing{
			MessageId: id, Timestamp: time.Now(), ContentType: "application/json",
			Body: []byte(`{"event_type":"order.placed","message_id":"` + id + `"}`),
		})
	}

	// three messages the consumer rejects: reason rejected
	for i := range 3 {
		if err := publish(ch, "orders.checkout", "rej-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		d, ok, err := ch.Get("orders.checkout", false)
		for start := time.Now(); !ok && err == nil && time.Since(start) < 5*time.Second; {
			time.Sleep(50 * time.Millisecond)
			d, ok, err = ch.Get("orders.checkout", false)
		}
		if err != nil || !ok {
			t.Fatalf("get from orders.checkout: ok=%v %v", ok, err)
		}
		if err := d.Nack(false, false); err != nil {
			t.Fatal(err)
		}
	}

	// the producer: 5 msg/s into orders.work for at most 20 s, each expiring
	// into orders.parking
	ctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	pch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer pch.Close()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := publish(pch, "orders.work", "exp-"+strconv.Itoa(n)); err != nil {
					return
				}
			}
		}
	}()

	s := startTerm(t, 120, 40, brokerEnv(t, cfg), "--journal", filepath.Join(t.TempDir(), "journal.db"))
	s.waitFor("orders.parking", "1 parking queue", "state", "trend", "oldest", "sources")

	// rate, trend, age and sources, once two polls have measured growth
	var row []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr := s.screen()
		row = healthRow.FindStringSubmatch(scr)
		if row != nil {
			rate, _ := strconv.ParseFloat(strings.TrimSuffix(row[3], "k"), 64)
			_, aged := time.ParseDuration(row[5])
			if rate > 0 && strings.ContainsAny(row[4], sparkChars) && aged == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queues screen never showed a rate, a trend and an age for orders.parking; row %q:\n%s", row, scr)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if _, err := time.ParseDuration(row[5]); err != nil {
		t.Errorf("oldest %q is not an age: %q", row[5], row)
	}
	if src := row[7]; !strings.Contains(src, "orders.work") || !strings.Contains(src, "orders.checkout") {
		t.Errorf("sources of orders.parking %q, want orders.work and orders.checkout: %q", src, row)
	}
	if !strings.Contains(s.screen(), "doctor: 1 error") {
		t.Errorf("the header does not count the planted error:\n%s", s.screen())
	}

	// the doctor screen: the planted finding with its severity word
	s.keys("D")
	scr := s.waitFor("doctor — vhost "+cfg.Vhost, "ERROR", "dlx-missing-exchange", "billing.work", "fix:")
	if strings.Index(scr, "ERROR") > strings.Index(scr, "ADVISORY") && strings.Contains(scr, "ADVISORY") {
		t.Errorf("the error is not listed first:\n%s", scr)
	}
	s.keys("Escape")
	s.waitFor("1 parking queue")

	// the filter bar with a field: reason=rejected narrows the real groups
	s.keys("/")
	s.typeText("orders.parking")
	s.keys("Enter")
	s.keys("Enter")
	s.waitFor("orders.parking (classic)", "expired", "rejected")
	s.keys("/")
	s.typeText("reason=rejected")
	s.keys("Enter")
	scr = s.waitFor("filtered: 3 of", "where reason=rejected")
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, " expired ") {
			t.Errorf("an expired group survived reason=rejected: %q\n%s", l, scr)
		}
	}
	s.keys("/")
	s.typeText(" reason=nonsense")
	s.waitFor("bad filter, the last good one stays")
	s.keys("Escape")
	s.waitGone("where reason=rejected")
	s.keys("q")
	waitExit(t, s)
}
