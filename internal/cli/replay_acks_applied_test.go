package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A replay of a group interleaved with others acks each source behind
// unsettled messages, which the broker's channel and then the queue take
// long to apply: each walks the channel's outstanding deliveries from the
// oldest (README, "A group interleaved with others is slow to take").
//
// Right after the replay the queue must hold exactly the messages it did
// not take, ready: none of the replayed is back (a duplicate: its copy was
// confirmed), none of the rest is still held. On the code before this test,
// 8,000 of 40,000 left 34,278 ready 20 s after the replay where 32,000
// should be: the hold connection's close gave up after 3 s and closed the
// socket while the broker's channel still had acks to handle, those died
// with it, and the queue put their sources back. 4,000 of 20,000 did the
// same in a loaded CI run (17,465 for 16,000); with the node quiet its acks
// were applied before the process ended; with the node busy (a raw settle
// beside it; a CI run) 14 s and 80 s after the replay ended, the queue
// showing 3 of its 16,000 ready meanwhile.
func TestAReplayEndsOnceTheQueueAppliedItsSourceAcks(t *testing.T) {
	isolate(t)
	cfg, conn, ch := parkingQueue(t, "cliacksapplied")
	if _, err := ch.QueueDeclare("dest", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	const n = 40000
	loadGroups(t, ch, "parking", n, func(i int) string { return fmt.Sprintf("E%d", i%5) })
	brokertest.WaitDepth(t, conn, "parking", n)
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}
	stdout, stderr, code := run(t, Assets{}, append(flags, "replay", "parking", "--group", "published/E1", "--yes",
		"--canary", "1", "--observe", "100ms", "--baseline", "0s", "--rate", "100000")...)
	ended := time.Now()
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("resolved %d, failed again 0, returned 0, untouched 0", n/5)) {
		t.Fatalf("replay of the group: exit %d\n%.3000s\n%s", code, stdout, stderr)
	}
	q, err := ch.QueueDeclarePassive("parking", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Messages != n-n/5 {
		brokertest.WaitDepth(t, conn, "parking", n-n/5)
		t.Errorf("right after the replay the source held %d ready messages of the %d it keeps; all were back %s later",
			q.Messages, n-n/5, time.Since(ended).Round(100*time.Millisecond))
	}
	brokertest.WaitDepth(t, conn, "dest", n/5)
}
