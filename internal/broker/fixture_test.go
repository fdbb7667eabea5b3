package broker_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// fixture is one test's vhost with a plain amqp091-go connection, used to
// build queues and publish test messages independently of the code under test.
type fixture struct {
	t    testing.TB
	cfg  broker.Config
	conn *amqp.Connection
	ch   *amqp.Channel
}

func newFixture(t testing.TB, prefix string) *fixture {
	t.Helper()
	return fixtureOn(t, brokertest.NewVhost(t, prefix))
}

// fixtureOn is a fixture on a vhost that already exists (e.g. on a private
// node).
func fixtureOn(t testing.TB, cfg broker.Config) *fixture {
	t.Helper()
	conn, err := amqp.Dial(vhostURL(t, cfg))
	if err != nil {
		t.Fatalf("dial test vhost: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, cfg: cfg, conn: conn, ch: ch}
}

func vhostURL(t testing.TB, cfg broker.Config) string {
	u, err := url.Parse(cfg.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + cfg.Vhost
	u.RawPath = "/" + url.PathEscape(cfg.Vhost)
	return u.String()
}

// live dials dlqt's reader on the fixture's vhost.
func (f *fixture) live() *broker.Live {
	f.t.Helper()
	l, err := broker.Dial(context.Background(), f.cfg)
	if err != nil {
		f.t.Fatalf("Dial: %v", err)
	}
	f.t.Cleanup(func() { l.Close() })
	return l
}

func (f *fixture) declare(name string, args amqp.Table) {
	f.t.Helper()
	if _, err := f.ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		f.t.Fatalf("declare %s: %v", name, err)
	}
}

// testMessage is message i of a published run: its id, a publisher
// timestamp and a header of each common type.
func testMessage(i int, body []byte) amqp.Publishing {
	return amqp.Publishing{
		MessageId:    fmt.Sprintf("m-%05d", i),
		Timestamp:    time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Second),
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		Headers:      amqp.Table{"n": int32(i), "source": "test"},
		Body:         body,
	}
}

// publish sends n test messages to queue through the default exchange and
// waits for the broker's confirms; it returns their ids in publish order.
// fillSmall declares queue (classic) and fills it with n small messages
// (loadSmall), waiting until it counts them all.
func (f *fixture) fillSmall(queue string, n int) {
	f.t.Helper()
	f.declare(queue, nil)
	loadSmall(f.t, f.conn, queue, n)
	f.waitDepth(queue, n)
}

func (f *fixture) publish(queue string, n int, size int) []string {
	f.t.Helper()
	ids := make([]string, n)
	var last *amqp.DeferredConfirmation
	for i := range n {
		body := []byte(fmt.Sprintf(`{"message_id":"m-%05d"}`, i))
		if len(body) < size {
			body = append(body, make([]byte, size-len(body))...)
		}
		p := testMessage(i, body)
		ids[i] = p.MessageId
		dc, err := f.ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, true, false, p)
		if err != nil {
			f.t.Fatalf("publish: %v", err)
		}
		last = dc
	}
	if last != nil && !last.Wait() {
		f.t.Fatal("broker nacked a test message")
	}
	return ids
}

// publishOne sends one message with the given headers.
func (f *fixture) publishOne(exchange, key string, p amqp.Publishing) {
	f.t.Helper()
	dc, err := f.ch.PublishWithDeferredConfirmWithContext(context.Background(), exchange, key, false, false, p)
	if err != nil || !dc.Wait() {
		f.t.Fatalf("publish to %q/%q: %v", exchange, key, err)
	}
}

// depth is the ready count of a queue, read independently of dlqt.
func (f *fixture) depth(queue string) int { return brokertest.Depth(f.t, f.conn, queue) }

// waitDepth waits until queue holds want ready messages.
func (f *fixture) waitDepth(queue string, want int) { brokertest.WaitDepth(f.t, f.conn, queue, want) }

// eventually retries check until it returns "" (the management API's
// statistics and policies lag by seconds), else fails with its last word.
func eventually(t testing.TB, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (f *fixture) management() *rabbithole.Client {
	f.t.Helper()
	u, err := url.Parse(f.cfg.AMQPURL)
	if err != nil {
		f.t.Fatal(err)
	}
	pass, _ := u.User.Password()
	rh, err := rabbithole.NewClient(f.cfg.MgmtURL, u.User.Username(), pass)
	if err != nil {
		f.t.Fatal(err)
	}
	return rh
}
