package cli

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
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
	code := func(i int) string {
		if i%((group+other)/other) == 0 && i/((group+other)/other) < other {
			return "E2" // spread through the queue: the sweep must pass over them
		}
		return "E1"
	}
	loadGroups(t, ch, "parking", group+other, code)
	brokertest.WaitDepth(t, conn, "parking", group+other)
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}

	// Past the index's memory budget the plan is cut, and says where and why
	// (512 KiB: about 6,000 packed entries of the 12,300).
	stdout, stderr, exit := run(t, Assets{}, append(flags, "--memory-budget", "512KiB", "replay", "parking", "--group", "published/E1")...)
	if exit != 0 || !strings.Contains(stdout, "messages were read (dlqt memory budget (512KiB of index; --memory-budget)): a group covers those") ||
		!strings.Contains(stderr, fmt.Sprintf("of %d messages of parking: dlqt memory budget", group+other)) {
		t.Fatalf("dry run under a 512 KiB budget: exit %d\n%s\n%s", exit, stdout, stderr)
	}

	// Run so, it replays the part of the group it read, and says, in its
	// summary and its exit status (4), that the rest was not looked at.
	// (Before, it ended "resolved N ... untouched 0" and exit 0: a script
	// took a million-message group for done after its first 130,044.)
	runArgs := []string{"replay", "parking", "--group", "published/E1", "--yes", "--canary", "1", "--observe", "100ms", "--baseline", "0s", "--rate", "100000"}
	stdout, stderr, exit = run(t, Assets{}, append(append(flags, "--memory-budget", "512KiB"), runArgs...)...)
	m := regexp.MustCompile(fmt.Sprintf(`not read: replay rp-\S+ read only the first (\d+) of the %d messages of parking \(dlqt memory budget`, group+other)).FindStringSubmatch(stdout)
	if exit != exitPartial || m == nil {
		t.Fatalf("replay under a 512 KiB budget: exit %d, want %d and a line saying what was not read\n%s\n%s", exit, exitPartial, stdout, stderr)
	}
	read, _ := strconv.Atoi(m[1])
	first := 0
	for i := range read {
		if code(i) == "E1" {
			first++
		}
	}
	if !strings.Contains(stdout, fmt.Sprintf("resolved %d, failed again 0, returned 0, untouched 0", first)) || first == 0 || first == group {
		t.Fatalf("replay under a 512 KiB budget read %d messages, want %d of the group resolved:\n%s", read, first, stdout)
	}

	stdout, stderr, exit = run(t, Assets{}, append(flags, runArgs...)...)
	if exit != 0 || !strings.Contains(stdout, fmt.Sprintf("resolved %d, failed again 0, returned 0, untouched 0", group-first)) || strings.Contains(stdout, "not read") {
		t.Fatalf("replay of the rest of the group: exit %d\n%s\n%s", exit, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "--limit") {
		t.Errorf("the replay says it was cut by --limit:\n%s\n%s", stdout, stderr)
	}
	brokertest.WaitDepth(t, conn, "dest", group)
	brokertest.WaitDepth(t, conn, "parking", other)

	stdout, stderr, exit = run(t, Assets{}, append(flags, "discard", "dest", "--group", "published/E1", "--reason", "replayed by the test", "--yes")...)
	if exit != 0 || !strings.Contains(stdout, fmt.Sprintf("discarded %d message(s) from dest (held %d)", group, group)) {
		t.Fatalf("discard of the group: exit %d\n%.2000s\n%s", exit, stdout, stderr)
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
