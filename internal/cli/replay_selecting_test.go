package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A replay to a destination replay.allow names selects as it holds: one
// read of the queue, no plan read first. It moves exactly the group, and
// leaves every other message where it was, in its order; a classic queue
// and a quorum queue alike. A replay to the messages' own route, which only
// a read can tell, is still planned first.
func TestAReplayToAnAllowedDestinationSelectsAsItHolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		args amqp.Table
		more []string
	}{
		{"classic", nil, nil},
		{"quorum", amqp.Table{"x-queue-type": "quorum"}, []string{"--accept-delivery-cost"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			cfg := brokertest.NewVhost(t, "cliselect"+tc.name)
			conn := brokertest.Dial(t, cfg)
			ch, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ch.Close() })
			for _, q := range []string{"orders.dlq", "work", "dest"} {
				if _, err := ch.QueueDeclare(q, true, false, false, false, tc.args); err != nil {
					t.Fatal(err)
				}
			}
			const n = 3000
			loadGroups(t, ch, "orders.dlq", n, func(i int) string { return fmt.Sprintf("E%d", i%3) })
			brokertest.WaitDepth(t, conn, "orders.dlq", n)
			config := filepath.Join(home, "dlqt.yaml")
			if err := os.WriteFile(config, []byte("replay:\n  allow: [\":work\"]\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost, "--config", config}
			replay := func(group, to string) (string, string) {
				t.Helper()
				stdout, stderr, code := run(t, Assets{}, append(append(flags, "replay", "orders.dlq", "--group", group, "--to", to, "--yes",
					"--canary", "2", "--observe", "100ms", "--baseline", "0s", "--rate", "100000"), tc.more...)...)
				if code != 0 || !strings.Contains(stdout, fmt.Sprintf("resolved %d, failed again 0, returned 0, untouched 0", n/3)) {
					t.Fatalf("replay of %s to %s: exit %d\n%.3000s\n%s", group, to, code, stdout, stderr)
				}
				return stdout, stderr
			}

			stdout, stderr := replay("published/E1", ":work")
			if !strings.Contains(stdout, "selected as they are held: one read of the queue") || strings.Contains(stderr, "reading orders.dlq") {
				t.Errorf("the replay to an allowed destination was planned first:\n%s\n%s", stdout, stderr)
			}
			brokertest.WaitDepth(t, conn, "work", n/3)
			brokertest.WaitDepth(t, conn, "orders.dlq", n-n/3)
			if got, want := queueIDs(t, ch, "work"), groupIDs(n, 1); !slices.Equal(got, want) {
				t.Errorf("work holds %d ids (first %v), want the %d of E1 in order", len(got), got[:min(3, len(got))], len(want))
			}

			// The messages' own route (:dest) is allowed only as their own:
			// a read tells, so that replay is planned first, as before.
			stdout, _ = replay("published/E2", ":dest")
			if !strings.Contains(stdout, fmt.Sprintf("%d message(s) of orders.dlq", n/3)) {
				t.Errorf("the replay to the messages' own route was not planned first:\n%s", stdout)
			}
			brokertest.WaitDepth(t, conn, "dest", n/3)
			if got, want := queueIDs(t, ch, "orders.dlq"), groupIDs(n, 0); !slices.Equal(got, want) {
				t.Errorf("orders.dlq holds %d ids (first %v), want the %d of E0 in order", len(got), got[:min(3, len(got))], len(want))
			}
			if stdout, stderr, code := run(t, Assets{}, append(flags, "journal", "verify")...); code != 0 {
				t.Errorf("journal verify: exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

// groupIDs are the ids loadGroups gives group E<g> of n messages in 3 groups.
func groupIDs(n, g int) []string {
	var out []string
	for i := g; i < n; i += 3 {
		out = append(out, fmt.Sprintf("m-%05d", i))
	}
	return out
}

// queueIDs takes every message of queue and returns their ids in order.
func queueIDs(t *testing.T, ch *amqp.Channel, queue string) []string {
	t.Helper()
	var out []string
	for {
		d, ok, err := ch.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, d.MessageId)
	}
}
