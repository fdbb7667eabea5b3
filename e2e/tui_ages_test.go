package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// End-to-end for issue 12's items 2 and 3 as left open: the oldest age of a
// queue nobody has browsed yet, and numbers that say how old they are once
// the broker may have moved on behind dlqt's back.

// deliveries is how many times the broker has handed out messages of
// queue (deliver, get and redeliver counts of its management stats).
func deliveries(t *testing.T, cfg broker.Config, queue string) int {
	t.Helper()
	q, err := managementClient(t, cfg).GetQueue(cfg.Vhost, queue)
	if err != nil {
		t.Fatal(err)
	}
	if q.MessageStats == nil {
		return 0
	}
	return int(q.MessageStats.DeliverGet + q.MessageStats.Redeliver)
}

// selectQueue moves the queues screen's cursor until the health line is
// about queue, and returns the screen.
func selectQueue(s *term, queue string) string {
	s.t.Helper()
	for range 10 {
		scr := s.screen()
		if strings.Contains(scr, "\n"+queue+": ") {
			return scr
		}
		s.keys("Down")
		time.Sleep(150 * time.Millisecond)
	}
	return s.waitFor("\n" + queue + ": ")
}

// TestTUIWalkOldestOfAQuorumQueueNotReadYet: after the demo scenarios load,
// payments.parking (quorum, delivery limit) holds dead letters with no
// timestamp property. Its oldest age is "unread" (or, once the broker's
// depth history covers minutes, a bound from it: "≥4m"), never "?", its health
// line says a read would count a delivery (before 4.3, where dlqt's own
// requeue still counts one), and listing it for several
// polls hands out none of its messages.
func TestTUIWalkOldestOfAQuorumQueueNotReadYet(t *testing.T) {
	cfg, _ := scenarioVhost(t)
	before := deliveries(t, cfg, "payments.parking")
	s := startTerm(t, 80, 24, brokerEnv(t, cfg), "--journal", filepath.Join(t.TempDir(), "journal.db"))
	s.waitFor("payments.parking", "billing.parking")
	row := regexp.MustCompile(`(?m)^[› ] (ok|WARN|CRIT)\s+payments\.parking\s+\d+\s.*\s(\S+)\s+\d+\s+\S+$`)
	scr := selectQueue(s, "payments.parking")
	m := row.FindStringSubmatch(scr)
	// Unread, or once the broker's depth history covers a few minutes a
	// lower bound from it ("≥4m"): never an age only a read could give.
	if m == nil || !regexp.MustCompile(`^(unread|≥\d+[smhd])$`).MatchString(m[2]) {
		t.Fatalf("payments.parking's oldest is %q, want unread or a bound from the depth history (≥4m):\n%s", m, scr)
	}
	unread := "payments.parking: unread: each read counts a delivery here; enter asks first"
	if brokerOf(t, cfg).FreeRequeue {
		// 4.3: dlqt's own requeue counts no delivery, so a read is free to ask for.
		unread = "oldest not read yet (enter to browse)"
	}
	s.waitFor("payments.parking: ", unread)
	time.Sleep(2*5*time.Second + time.Second) // two polls, and the broker's stats interval
	if !strings.Contains(s.screen(), unread) {
		t.Errorf("the polls changed what the health line says of an unread queue:\n%s", s.screen())
	}
	if after := deliveries(t, cfg, "payments.parking"); after != before {
		t.Errorf("listing the queues delivered payments.parking's messages: %d deliveries, %d before", after, before)
	}
	s.keys("q")
	waitExit(t, s)
}

// TestTUIWalkNumbersSayTheirAgeAfterChangesBehindDlqtsBack: dead letters
// arrive while dlqt shows a queue's groups; past the refresh interval the
// groups say how old their read is, r reads again, the queues screen says
// its list's age when it is shown again until its re-read lands, and the
// journal screen does the same for an entry another dlqt appended.
func TestTUIWalkNumbersSayTheirAgeAfterChangesBehindDlqtsBack(t *testing.T) {
	cfg := brokertest.NewVhost(t, "tui-walk-ages")
	conn := plant(t, cfg, map[string]string{"work.dlx": "fanout"}, []plantedQueue{
		{name: "orders.parking", binds: [][2]string{{"work.dlx", ""}}},
		{name: "orders.work", args: amqp.Table{"x-message-ttl": int32(50), "x-dead-letter-exchange": "work.dlx"}},
	})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	n := 0
	deadLetter := func(k int) {
		for range k {
			// no timestamp property: only a read knows their age
			if err := ch.Publish("", "orders.work", false, false, amqp.Publishing{MessageId: "late-" + strconv.Itoa(n), Body: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	deadLetter(3)
	waitReady(t, cfg, "orders.parking", 3)
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath)
	s := startTerm(t, 120, 30, env)
	depth := regexp.MustCompile(`(?m)^[› ] (?:ok|WARN|CRIT)\s+orders\.parking\s+(\d+)\s`)
	// the management API samples depths every 5 s: wait for its 3
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if m := depth.FindStringSubmatch(s.screen()); m != nil && m[1] == "3" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orders.parking never showed its 3 dead letters:\n%s", s.screen())
		}
	}
	// Not read yet: the oldest column says so, or, once the management
	// API has depth samples of the queue (a CI run under load got them
	// before the list showed its 3), the lower bound they give ("≥21s").
	scr0 := s.waitFor("orders.parking: ", "oldest not read yet (enter to browse)")
	if !regexp.MustCompile(`orders\.parking\s+3\s.*( unread |≥\d+s)`).MatchString(scr0) {
		t.Fatalf("the oldest column of a queue not read yet shows neither unread nor a lower bound:\n%s", scr0)
	}

	s.keys("Enter")
	scr := s.waitFor("all 3 messages, 1 group")
	if strings.Contains(scr, " · read ") {
		t.Fatalf("a read just made says it is old:\n%s", scr)
	}
	deadLetter(2)
	waitReady(t, cfg, "orders.parking", 5)
	// the groups are never re-read behind the user's back: they say their age
	scr = s.waitFor("all 3 messages, 1 group · read ")
	if !regexp.MustCompile(`all 3 messages, 1 group · read \d+s ago`).MatchString(scr) {
		t.Errorf("the stale groups' marker: %s", scr)
	}
	s.keys("r")
	scr = s.waitFor("all 5 messages, 1 group")
	if strings.Contains(scr, " · read ") {
		t.Errorf("a fresh read still says it is old:\n%s", scr)
	}

	// the queues list was read (3) before the groups were opened: shown
	// again, it says its age until the re-read that the return asks for
	// lands (which may still say 5, the management API's sample, for up to
	// its interval)
	deadLetter(2)
	waitReady(t, cfg, "orders.parking", 7)
	s.keys("Escape")
	back := time.Now()
	deadline, sawMarked := back.Add(15*time.Second), false
	for {
		scr = s.screen()
		m := depth.FindStringSubmatch(scr)
		if m != nil && m[1] == "7" {
			break
		}
		if m != nil && m[1] == "3" && !regexp.MustCompile(`parking queue · read \d+s ago`).MatchString(scr) {
			t.Fatalf("the queues screen shows depth %s without its age:\n%s", m[1], scr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queues screen never showed the 7 dead letters:\n%s", scr)
		}
		if m != nil && m[1] == "3" {
			sawMarked = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("back on the queues: the old list shown with its age: %v; the broker's 7 shown after %v", sawMarked, time.Since(back).Round(10*time.Millisecond))
	// the browse's death times date the oldest now
	s.waitFor("orders.parking: ", "(death time)")

	// the journal screen: an entry appended by another dlqt beside it
	s.keys("J")
	s.waitFor("journal "+jpath+" — 0 entries", "chain verified")
	if r := runDlqt(t, env, "journal", "export", "--out", filepath.Join(t.TempDir(), "beside.jsonl")); r.code != 0 {
		t.Fatalf("export beside the TUI: exit %d: %s", r.code, r.stderr)
	}
	s.waitFor("— 0 entries · read ")
	s.keys("r")
	scr = s.waitFor("— 1 entry", "export")
	if strings.Contains(scr, " · read ") {
		t.Errorf("the journal just re-read says it is old:\n%s", scr)
	}
	s.keys("q")
	waitExit(t, s)
}

// TestTUIWalkAReplayRefreshesTheNumbersItChanged: once a replay from the
// TUI has finished, the groups and the queues screens show the queue as it
// is now (or say how old their number is), never the old count unmarked.
func TestTUIWalkAReplayRefreshesTheNumbersItChanged(t *testing.T) {
	b := newReplayBed(t, "tui-walk-replay-fresh")
	b.park(6)
	s := startTerm(t, 120, 30, b.env, "--actor", "ana@bastion", "--queue", bedParking)
	s.waitFor("all 6 messages, 1 group")
	s.keys("R")
	s.waitFor("Replay dry run", "6 messages")
	s.keys("Enter")
	s.waitFor("Start the replay?")
	s.keys("y")
	deadline := time.Now().Add(60 * time.Second)
	for ramps := 0; !strings.Contains(s.screen(), "FINISHED"); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replay never finished:\n%s", s.screen())
		}
		if scr := s.screen(); ramps < 4 && (strings.Contains(scr, "WAITING FOR YOUR DECISION") || strings.Contains(scr, "RUNNING")) {
			s.typeText("+")
			ramps++
		}
	}
	b.waitDepth(bedParking, 0)
	s.keys("Escape")
	scr := s.waitFor(bedParking + " (")
	if strings.Contains(scr, "all 6 messages") && !strings.Contains(scr, " · read ") {
		t.Errorf("the groups show the count from before the replay, unmarked:\n%s", scr)
	}
	s.keys("Escape")
	row := regexp.MustCompile(`(?m)orders\.parking\s+(\d+)( · \S+ ago| · settling)?\s`)
	scr = s.waitFor("parking queue")
	if m := row.FindStringSubmatch(scr); m == nil || (m[1] == "6" && m[2] == "") {
		t.Errorf("right after the replay the queues screen shows the old depth unmarked: %q\n%s", m, scr)
	}
}

// TestTUIWalkASnapshotDatesEveryQueueByItsDeaths: reading a snapshot file
// is free, so every queue's oldest age comes from its messages' times at
// once, payments.parking (no timestamp property) included.
func TestTUIWalkASnapshotDatesEveryQueueByItsDeaths(t *testing.T) {
	s := startTerm(t, 80, 24, isolatedEnv(t), "--demo")
	s.waitFor("DEMO data", "payments.parking")
	row := regexp.MustCompile(`(?m)^[› ] (?:ok|WARN|CRIT)\s+payments\.parking\s+\d+\s.*\s(\S+)\s+\d+\s+\S+$`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		scr := s.screen()
		m := row.FindStringSubmatch(scr)
		if m != nil {
			if _, err := time.ParseDuration(strings.Replace(m[1], "d", "h", 1)); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("payments.parking's oldest never became an age: %q\n%s", m, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	selectQueue(s, "payments.parking")
	s.waitFor("payments.parking: ", "(death time)")
}
