package cli

import (
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A quorum queue's replay and discard take the whole group too. Before
// a0435dc its plan was read the old way, whole messages in memory and the
// first 10,000 only: a group of 10,200 moved 10,000 (the streamed read had
// left the queue in another order than the plan saw; window.requeue).
func TestAQuorumQueuesReplayTakesTheWholeGroup(t *testing.T) {
	isolate(t)
	cfg := brokertest.NewVhost(t, "cliwholeq")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	for _, q := range []string{"orders.dlq", "dest"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
			t.Fatal(err)
		}
	}
	const group, other = 10200, 100
	loadGroups(t, ch, "orders.dlq", group+other, func(i int) string {
		if i%((group+other)/other) == 7 {
			return "E2"
		}
		return "E1"
	})
	brokertest.WaitDepth(t, conn, "orders.dlq", group+other)
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}
	stdout, stderr, code := run(t, Assets{}, append(flags, "replay", "orders.dlq", "--group", "published/E1", "--yes", "--accept-delivery-cost",
		"--canary", "1", "--observe", "100ms", "--baseline", "0s", "--rate", "100000")...)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("resolved %d, failed again 0, returned 0, untouched 0", group)) {
		t.Fatalf("replay of the group: exit %d\n%.3000s\n%s", code, stdout, stderr)
	}
	brokertest.WaitDepth(t, conn, "dest", group)
	brokertest.WaitDepth(t, conn, "orders.dlq", other)
}
