package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// Issue 20, items 3 and 7 in a real terminal: a gzip JSON envelope that
// died in orders.q opens in its ADDRESS_INVALID group, its page says how
// it was decoded and shows it decoded, and names its trace with the link
// of the config's trace_url.
func TestTUIShowsAGzipEnvelopeDecodedWithItsTraceLink(t *testing.T) {
	cfg := brokertest.NewVhost(t, "gzip-trace")
	conn := plant(t, cfg, nil, []plantedQueue{
		{name: "orders.dlq"},
		{name: "orders.q", args: amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}},
	})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	body := `{"message_id":"ord-17","event_type":"order.placed","failure":{"reason_code":"ADDRESS_INVALID"},"data":{"note":"cust-4711 moved","street":"` + strings.Repeat("Main Street ", 150) + `"}}`
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(body))
	w.Close()
	err = ch.PublishWithContext(context.Background(), "", "orders.q", false, false, amqp.Publishing{
		ContentType: "application/json", ContentEncoding: "gzip", Body: gz.Bytes(),
		Headers: amqp.Table{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WaitDepth(t, conn, "orders.q", 1)
	d, ok, err := ch.Get("orders.q", false)
	if err != nil || !ok {
		t.Fatalf("get: %v %v", ok, err)
	}
	d.Reject(false)
	brokertest.WaitDepth(t, conn, "orders.dlq", 1)

	env := brokerEnv(t, cfg)
	conf := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(conf, []byte("trace_url: https://tempo.example/trace/{trace_id}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTerm(t, 120, 40, env, "--config", conf, "--queue", "orders.dlq", "--journal", filepath.Join(t.TempDir(), "j.db"))
	s.waitFor("ADDRESS_INVALID", "order.placed")
	s.keys("Enter")
	s.waitFor("ord-17")
	s.keys("Enter")
	s.waitFor("message ord-17", "trace id        4bf92f3577b34da6a3ce929d0e0e4736 (traceparent)",
		"trace link      https://tempo.example/trace/4bf92f3577b34da6a3ce929d0e0e4736")
	s.scrollTo("payload (gzip, " + thousands(gz.Len()) + " → " + thousands(len(body)) + " bytes, application/json)")
	s.waitFor(`"reason_code": "ADDRESS_INVALID"`)
	s.keys("q")
	waitExit(t, s)
}

// thousands writes n as the page does: 2310 -> "2,310".
func thousands(n int) string {
	d := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
