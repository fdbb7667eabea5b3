package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// TestTUICursorFollowsTheQueueWhenTheListResorts: the cursor sits on the
// third queue; that queue starts filling, the next poll moves it to the
// top, the cursor goes with it, and enter opens it, not the queue that
// took its old row.
func TestTUICursorFollowsTheQueueWhenTheListResorts(t *testing.T) {
	cfg := brokertest.NewVhost(t, "follow")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"a.dlq": 3, "b.dlq": 2, "c.dlq": 1} {
		if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := ch.Publish("", name, false, false, amqp.Publishing{Body: []byte(`{"event_type":"x"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := startTerm(t, 100, 24, brokerEnv(t, cfg))
	s.waitFor("3 parking queues", "a.dlq", "b.dlq", "c.dlq")
	s.keys("Down", "Down")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(cursorRow(s.screen()), "c.dlq"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the cursor is not on c.dlq after two downs:\n%s", s.screen())
		}
	}

	ctx, stop := context.WithTimeout(context.Background(), 40*time.Second)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	wg.Add(1)
	go func() { // c.dlq fills at 10 msg/s: the polls move it to the top
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if ch.Publish("", "c.dlq", false, false, amqp.Publishing{Body: []byte(`{"event_type":"x"}`)}) != nil {
					return
				}
			}
		}
	}()

	var scr string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		scr = s.screen()
		if first := firstRow(scr); strings.Contains(first, "c.dlq") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("c.dlq never moved to the top:\n%s", scr)
		}
	}
	if first := firstRow(scr); !strings.HasPrefix(first, "›") {
		t.Fatalf("the cursor stayed on the third row when c.dlq moved to the top:\n%s", scr)
	}
	s.keys("Enter")
	scr = s.waitFor("reason_code")
	if title, _, _ := strings.Cut(scr, "\n"); !strings.Contains(title, "c.dlq") {
		t.Fatalf("enter opened %q, want c.dlq:\n%s", title, scr)
	}
}

// firstRow is the first row of the queue list: the line after its header.
func firstRow(scr string) string {
	lines := strings.Split(scr, "\n")
	for i, l := range lines {
		if strings.Contains(l, "state") && strings.Contains(l, "queue") && i+1 < len(lines) {
			return strings.TrimLeft(lines[i+1], " ")
		}
	}
	return ""
}

// cursorRow is the line of the list the cursor is on.
func cursorRow(scr string) string {
	for _, l := range strings.Split(scr, "\n") {
		if strings.HasPrefix(l, "›") {
			return l
		}
	}
	return ""
}
