package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A replay or a discard of a group takes the whole group by default, as a
// read does, not the first 10,000 messages of the queue. Before: a replay
// of a 12,000-message group moved 10,000 and reported "resolved 10000 …
// untouched 0", and a discard took the first 10,000 too.
func TestReplayAndDiscardTakeTheWholeGroupByDefault(t *testing.T) {
	isolate(t)
	cfg, conn, ch := parkingQueue(t, "cliwhole")
	if _, err := ch.QueueDeclare("dest", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	const group, other = 12000, 300
	loadGroups(t, ch, "parking", group+other, func(i int) string {
		if i%((group+other)/other) == 0 && i/((group+other)/other) < other {
			return "E2" // spread through the queue: the sweep must pass over them
		}
		return "E1"
	})
	brokertest.WaitDepth(t, conn, "parking", group+other)
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}

	// Past the index's memory budget the plan is cut, and says where and why.
	stdout, stderr, code := run(t, Assets{}, append(flags, "--memory-budget", "2MiB", "replay", "parking", "--group", "published/E1")...)
	if code != 0 || !strings.Contains(stdout, "messages were read (dlqt memory budget (2MiB of index; --memory-budget)): a group covers those") ||
		!strings.Contains(stderr, fmt.Sprintf("of %d messages of parking: dlqt memory budget", group+other)) {
		t.Fatalf("dry run under a 2 MiB budget: exit %d\n%s\n%s", code, stdout, stderr)
	}

	stdout, stderr, code = run(t, Assets{}, append(flags, "replay", "parking", "--group", "published/E1", "--yes",
		"--canary", "1", "--observe", "100ms", "--baseline", "0s", "--rate", "100000")...)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("resolved %d, failed again 0, returned 0, untouched 0", group)) {
		t.Fatalf("replay of the group: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "--limit") {
		t.Errorf("the replay says it was cut by --limit:\n%s\n%s", stdout, stderr)
	}
	brokertest.WaitDepth(t, conn, "dest", group)
	brokertest.WaitDepth(t, conn, "parking", other)

	stdout, stderr, code = run(t, Assets{}, append(flags, "discard", "dest", "--group", "published/E1", "--reason", "replayed by the test", "--yes")...)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("discarded %d message(s) from dest (held %d)", group, group)) {
		t.Fatalf("discard of the group: exit %d\n%.2000s\n%s", code, stdout, stderr)
	}
	brokertest.WaitDepth(t, conn, "dest", 0)
	brokertest.WaitDepth(t, conn, "parking", other)
}

// loadGroups publishes n messages to queue with confirms, message i with
// the reason code code(i), each routed back to queue dest.
func loadGroups(t *testing.T, ch *amqp.Channel, queue string, n int, code func(i int) string) {
	t.Helper()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	pending := make([]*amqp.DeferredConfirmation, 0, n)
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("m-%05d", i), ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Body:    []byte(fmt.Sprintf(`{"failure":{"reason_code":%q},"n":%d}`, code(i), i)),
			Headers: amqp.Table{"x-original-exchange": "", "x-original-routingKey": "dest"}})
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, dc)
	}
	for _, dc := range pending {
		if !dc.Wait() {
			t.Fatal("a load publish was nacked")
		}
	}
}
