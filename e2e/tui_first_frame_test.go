package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/cli"
)

// narrowRow reads state, depth and in/s of orders.parking at 50 columns.
var narrowRow = regexp.MustCompile(`(?m)^[› ] (ok|WARN|CRIT)\s+orders\.parking\s+([\d,]+)\s+([\d.]+k?)\s`)

// TestTUIFirstFrameShowsTheInflowAt50Columns: a parking queue still
// receiving dead letters (without a timestamp property, so no head
// timestamp) shows its inflow and a raised state on the first frame, before
// a second poll could measure anything, and at 50 columns in/s and trend
// are still there. `dlqt queues` prints the same inflow.
func TestTUIFirstFrameShowsTheInflowAt50Columns(t *testing.T) {
	cfg := brokertest.NewVhost(t, "first-frame")
	conn := plant(t, cfg, map[string]string{"work.dlx": "fanout"}, []plantedQueue{
		{name: "orders.parking", binds: [][2]string{{"work.dlx", ""}}},
		{name: "orders.work", args: amqp.Table{"x-message-ttl": int32(50), "x-dead-letter-exchange": "work.dlx"}},
	})
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() { // 2 dead letters a second, expiring into orders.parking
		defer wg.Done()
		defer ch.Close()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if ch.Publish("", "orders.work", false, false, amqp.Publishing{Body: []byte(`{"event_type":"order.placed"}`)}) != nil {
					return
				}
			}
		}
	}()

	// the broker measures the depth's growth once it has two samples
	env := brokerEnv(t, cfg)
	var ingress float64
	for deadline := time.Now().Add(30 * time.Second); ingress <= 0; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatal("the management API never measured the depth's growth of orders.parking")
		}
		for _, r := range decodeJSON[[]cli.QueueRow](t, runDlqt(t, env, "queues", "--json")) {
			if r.Name == "orders.parking" {
				ingress = r.IngressRate
			}
		}
	}
	text := runDlqt(t, env, "queues").stdout
	m := regexp.MustCompile(`orders\.parking\s+classic\s+\d+\s+([\d.]+)\s+parking`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("dlqt queues has no row for orders.parking:\n%s", text)
	}
	if r, _ := strconv.ParseFloat(m[1], 64); r <= 0 {
		t.Errorf("dlqt queues shows RATE/s %s for orders.parking, still filling:\n%s", m[1], text)
	}

	started := time.Now()
	s := startTerm(t, 50, 24, env)
	scr := s.waitFor("orders.parking", "in/s", "trend")
	if took := time.Since(started); took >= 5*time.Second {
		t.Fatalf("the list took %s to show: that may be the second poll's frame, not the first", took)
	}
	row := narrowRow.FindStringSubmatch(scr)
	if row == nil {
		t.Fatalf("no row for orders.parking at 50 columns:\n%s", scr)
	}
	rate, _ := strconv.ParseFloat(strings.TrimSuffix(row[3], "k"), 64)
	if rate <= 0 || row[1] == "ok" {
		t.Errorf("first frame: orders.parking state %s, in/s %s; want a raised state and the inflow (the API said %.1f/s):\n%s", row[1], row[3], ingress, scr)
	}
}
