package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// End-to-end for what misled a first-time responder during a staged
// incident, driven in tmux: the demo snapshot where no broker is needed,
// else a vhost of the test's own.

// TestTUIWalkEscClosesHelpAndListsEachKeyOnce: esc under the full help
// closes it and does nothing else; refresh is listed once.
func TestTUIWalkEscClosesHelpAndListsEachKeyOnce(t *testing.T) {
	s := startTerm(t, 120, 40, isolatedEnv(t), "--demo")
	s.waitFor("DEMO data", "billing.parking")
	s.keys("Enter")
	s.waitFor("reason_code", "all 8 messages")
	s.keys("?")
	scr := s.waitFor("? = unknown")
	if n := strings.Count(scr, "refresh"); n != 1 {
		t.Errorf("the groups help lists refresh %d times:\n%s", n, scr)
	}
	s.keys("Escape")
	scr = s.waitGone("? = unknown")
	if !strings.Contains(scr, "reason_code") || strings.Contains(scr, "parking queues:") {
		t.Errorf("esc under the help left the groups screen:\n%s", scr)
	}
}

// TestTUIWalkAt60Columns: queue names keep their width while the sources
// and consumers columns give way (in/s and trend stay), event types theirs
// while the died column does, and every screen's footer keeps the quit key.
func TestTUIWalkAt60Columns(t *testing.T) {
	s := startTerm(t, 60, 24, isolatedEnv(t), "--demo")
	scr := s.waitFor("legacy.events.failed ", "payments.parking ", "q/ctrl+c quit", "in/s", "trend")
	if strings.Contains(scr, "sources") {
		t.Errorf("the sources column kept its width before in/s and trend at 60 columns:\n%s", scr)
	}
	s.keys("Enter")
	s.waitFor("reason_code", "q/ctrl+c quit")
	s.keys("Enter")
	// the event type keeps its width; the died column gives way to it (age stays)
	s.waitFor("billing.export.requested", "age", "q/ctrl+c quit")
	s.keys("D")
	s.waitFor("doctor — vhost", "q/ctrl+c quit")
}

// TestTUIWalkDoctorFoldsAdvisoriesAndKeepsCommandsWhole: the advisories
// fold into one row, a fix's command is one line that scrolls, and the
// doctor's status line does not carry the browse's message count.
func TestTUIWalkDoctorFoldsAdvisoriesAndKeepsCommandsWhole(t *testing.T) {
	s := startTerm(t, 80, 30, isolatedEnv(t), "--demo")
	s.waitFor("DEMO data", "billing.parking")
	s.keys("Enter")
	s.waitFor("all 8 messages")
	s.keys("D")
	scr := s.waitFor("8 advisories,", "enter to show")
	if strings.Contains(scr, "dlx-by-argument") || strings.Contains(scr, "all 8 messages") {
		t.Errorf("advisories not folded, or the browse's count on the doctor's status line:\n%s", scr)
	}
	s.keys("End", "Enter")
	s.waitFor("dlx-by-argument")
	s.keys("Enter")
	scr = s.waitFor("$ rabbitmqctl set_policy", "never wrapped")
	if strings.Contains(scr, "--apply-to queues") {
		t.Fatalf("at 80 columns the command should run past the edge:\n%s", scr)
	}
	for range 8 {
		s.keys("Right")
	}
	scr = s.waitFor("--apply-to queues")
	var line string
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "--apply-to queues") {
			line = l
		}
	}
	if !strings.Contains(line, "$ …") {
		t.Errorf("the scrolled command is not on its own line: %q\n%s", line, scr)
	}
}

// TestTUIWalkFilterAppliesWhenItParsesAndTheHeaderCounts: a bad line falls
// back to its whole words, never to a half-typed one, and the header always
// says how much of the read is shown.
func TestTUIWalkFilterAppliesWhenItParsesAndTheHeaderCounts(t *testing.T) {
	s := startTerm(t, 120, 40, isolatedEnv(t), "--demo")
	s.waitFor("DEMO data", "billing.parking")
	s.keys("Enter")
	s.waitFor("all 8 messages, 3 groups")
	s.keys("/")
	s.typeText("reason=rejected reason=bogus")
	scr := s.waitFor("bad filter, the last good one stays", "3 of 8 messages, 1 group", "where reason=rejected")
	if strings.Contains(scr, "text~reason") {
		t.Errorf("a half-typed word is in force:\n%s", scr)
	}
	s.keys("Escape")
	s.waitFor("all 8 messages, 3 groups")
	s.keys("/")
	s.typeText("event_type~no-such-event")
	s.keys("Enter")
	s.waitFor("0 of 8 messages, 0 groups")
}

// TestTUIWalkIDsKeepTheirTailAndDialogsNameThem: ids of one kind differ
// only at the end; the list keeps the end, the dialog names the ids.
func TestTUIWalkIDsKeepTheirTailAndDialogsNameThem(t *testing.T) {
	cfg := brokertest.NewVhost(t, "tui-walk-ids")
	conn := plant(t, cfg, nil, []plantedQueue{{name: "shipments.parking"}})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	for _, tail := range []string{"0041", "0042", "0043"} {
		id := "msg_shipment.track.updated.eu-west-1-" + tail
		if err := ch.Publish("", "shipments.parking", false, false, amqp.Publishing{MessageId: id, Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	s := startTerm(t, 80, 24, brokerEnv(t, cfg), "--journal", filepath.Join(t.TempDir(), "journal.db"),
		"--queue", "shipments.parking")
	s.waitFor("all 3 messages")
	s.keys("Enter")
	s.waitFor("….eu-west-1-0041", "….eu-west-1-0042", "….eu-west-1-0043")
	s.keys("Space", "Space")
	s.waitFor("2 marked")
	s.keys("x")
	s.waitFor("Discard 2 messages", "-0041, msg_shipmen", "-0042 (2)")
	s.keys("Escape")
}

// TestTUIWalkReplayNeverSaysFinishedBeforeItIs: every frame of the replay
// screen, from the first, shows the real phase.
func TestTUIWalkReplayNeverSaysFinishedBeforeItIs(t *testing.T) {
	b := newReplayBed(t, "tui-walk-replay")
	b.park(8)
	s := startTerm(t, 100, 30, b.env, "--actor", "ana@bastion", "--queue", bedParking)
	s.waitFor("all 8 messages", "rejected")
	s.keys("R")
	s.waitFor("Replay dry run", "8 messages")
	s.keys("Enter")
	s.waitFor("Start the replay?")
	s.keys("y")
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := s.screen()
		if strings.Contains(scr, "FINISHED") {
			t.Fatalf("FINISHED before the canary ran:\n%s", scr)
		}
		if strings.Contains(scr, "CANARY") || strings.Contains(scr, "OBSERVING") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replay never reached its canary:\n%s", scr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.keys("a")
	s.waitFor("Abort the replay?")
	s.keys("y")
	s.waitFor("ABORTED")
}

// TestTUIWalkHealthStaysRaisedAfterABurst: 37 dead letters at once raise
// the parking queue's state; once the inflow has decayed to 0 the state
// holds, and the queue's line says when the last one came, the growth and
// the oldest age by the death times a browse read.
func TestTUIWalkHealthStaysRaisedAfterABurst(t *testing.T) {
	cfg := brokertest.NewVhost(t, "tui-walk-health")
	conn := plant(t, cfg, map[string]string{"work.dlx": "fanout"}, []plantedQueue{
		{name: "orders.parking", binds: [][2]string{{"work.dlx", ""}}},
		{name: "orders.work", args: amqp.Table{"x-message-ttl": int32(50), "x-dead-letter-exchange": "work.dlx"}},
	})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	s := startTerm(t, 140, 30, brokerEnv(t, cfg), "--journal", filepath.Join(t.TempDir(), "journal.db"))
	s.waitFor("orders.parking", "no arrival seen yet")
	for i := range 37 {
		// no timestamp property: the age can only come from the death time
		if err := ch.Publish("", "orders.work", false, false, amqp.Publishing{MessageId: "burst-" + strconv.Itoa(i), Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	raised := regexp.MustCompile(`(?m)^[› ] (WARN|CRIT)\s+orders\.parking\s+37\s`)
	deadline := time.Now().Add(30 * time.Second)
	for !raised.MatchString(s.screen()) {
		if time.Now().After(deadline) {
			t.Fatalf("the burst never raised orders.parking:\n%s", s.screen())
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.keys("Enter")
	s.waitFor("all 37 messages")
	s.keys("Escape")
	s.waitFor("(death time)")

	// the inflow decays over the 30 s window; the state must not
	calm := regexp.MustCompile(`(?m)^[› ] (ok|WARN|CRIT)\s+orders\.parking\s+37\s+0\s`)
	deadline = time.Now().Add(60 * time.Second)
	var scr string
	for {
		scr = s.screen()
		if m := calm.FindStringSubmatch(scr); m != nil {
			if m[1] == "ok" {
				t.Fatalf("the state fell back to ok with 37 dead letters waiting:\n%s", scr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the inflow never decayed:\n%s", scr)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, want := range []string{"orders.parking: last dead letter ", "+37 in the last", "(death time)", "held until the depth is back to 0"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the health line lacks %q:\n%s", want, scr)
		}
	}
}

// TestTUIWalkADiscardRefreshesTheQueueDepth: back on the queues screen
// right after a discard, the depth is the new one (with its age while the
// broker's sampled depth trails), never the old number unmarked.
func TestTUIWalkADiscardRefreshesTheQueueDepth(t *testing.T) {
	b := newReplayBed(t, "tui-walk-stale")
	b.park(5)
	s := startTerm(t, 120, 30, b.env, "--actor", "ana@bastion")
	row := regexp.MustCompile(`(?m)orders\.parking\s+(\d+)( · \S+ ago| · settling)?\s`)
	deadline := time.Now().Add(20 * time.Second)
	for m := row.FindStringSubmatch(s.screen()); m == nil || m[1] != "5"; m = row.FindStringSubmatch(s.screen()) {
		if time.Now().After(deadline) {
			t.Fatalf("the queues screen never listed 5 in orders.parking:\n%s", s.screen())
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.keys("Enter")
	s.waitFor("all 5 messages")
	s.keys("Enter")
	s.waitFor("order-00000", "order-00004")
	s.keys("Space", "Space")
	s.waitFor("2 marked")
	s.keys("x")
	s.waitFor("Discard 2 messages")
	s.typeText("duplicates")
	s.keys("Enter")
	s.waitFor("Discard for good?")
	s.keys("y")
	s.waitFor("done: discarded 2", "all 3 messages")
	s.keys("Escape")
	s.waitFor("all 3 messages, 1 group")
	s.keys("Escape")
	scr := s.waitFor("parking queue")
	m := row.FindStringSubmatch(scr)
	if m == nil || (m[1] == "5" && m[2] == "") {
		t.Fatalf("right after the discard the queues screen shows the old depth unmarked: %q\n%s", m, scr)
	}
	t.Logf("depth right after the discard: %q", m[0])
}
