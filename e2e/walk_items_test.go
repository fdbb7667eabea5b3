package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// End-to-end for the smaller items of issue 12 (the 3 a.m. walk) that had
// only Update or golden tests: the built binary, headless or in tmux.

// TestUnknownCommandExits2: a command line dlqt cannot understand exits 2,
// as the README promises, with one line naming it.
func TestUnknownCommandExits2(t *testing.T) {
	r := runDlqt(t, isolatedEnv(t), "bogus")
	if r.code != 2 {
		t.Fatalf("dlqt bogus: exit %d, want 2: %s", r.code, r.stderr)
	}
	assertOneLine(t, r.stderr, `unknown command "bogus"`)
}

// TestTUIWalkRawSnapshotAsksOnATerminal: on a terminal, --raw asks; no
// keeps nothing, yes writes the secrets, says so and journals the file.
func TestTUIWalkRawSnapshotAsksOnATerminal(t *testing.T) {
	const secret = "hunter2-dlqt-scenario-password"
	env, jpath := seededJournal(t, 0)
	raw := filepath.Join(t.TempDir(), "raw.json")
	args := []string{"--demo", "snapshot", "legacy.events.failed", "--out", raw, "--raw"}

	s := startTerm(t, 240, 20, env, args...)
	s.waitFor("secrets included", "Write it? [y/N]")
	s.typeText("n")
	s.keys("Enter")
	s.waitFor("raw snapshot not written: not confirmed")
	if _, err := os.Stat(raw); err == nil {
		t.Fatal("a refused raw snapshot left a file")
	}

	s = startTerm(t, 240, 20, env, args...)
	s.waitFor("Write it? [y/N]")
	s.typeText("y")
	s.keys("Enter")
	s.waitFor("RAW: bodies and headers unredacted", "the journal records it")
	if !strings.Contains(snapshotBodies(t, raw), secret) {
		t.Error("the confirmed raw snapshot lacks the body as it was")
	}
	es := journalEntries(t, jpath)
	if len(es) != 1 || es[0].Action != triage.ActionSnapshotRaw || es[0].Details["file"] != raw {
		t.Errorf("journal after a confirmed raw snapshot: %+v", es)
	}
}

// TestTUIWalkMaxlenDeathsShowNoAttempts: a message pushed out by a length
// limit was never delivered; its attempts say so ("—"), not 0.
func TestTUIWalkMaxlenDeathsShowNoAttempts(t *testing.T) {
	s := startTerm(t, 120, 30, isolatedEnv(t), "--demo")
	s.waitFor("DEMO data", "billing.parking")
	s.keys("Enter")
	s.waitFor("all 8 messages")
	s.keys("/")
	s.typeText("reason=maxlen")
	s.keys("Enter")
	s.waitFor("where reason=maxlen")
	s.keys("Enter")
	scr := s.waitFor("maxlen (no reason_code) — 3 messages", "exp-0001")
	row := regexp.MustCompile(`(?m)^[› ] +exp-0001 +\S+\s+(\S+)\s`).FindStringSubmatch(scr)
	if row == nil || row[1] != "—" {
		t.Errorf("exp-0001's attempts %q, want —:\n%s", row, scr)
	}
	s.keys("Enter")
	scr = s.waitFor("reason          maxlen", "maxlen ×1")
	if !strings.Contains(scr, "attempts        —") {
		t.Errorf("the message page counts attempts of a maxlen death:\n%s", scr)
	}
}

// TestTUIWalkAGroupDiscardIsOneJournalRowNamingItsGroup: a group discarded
// from the groups screen under a filter is journaled with the group and the
// filter that chose it, and the journal screen shows the decision and its
// outcome as one row.
func TestTUIWalkAGroupDiscardIsOneJournalRowNamingItsGroup(t *testing.T) {
	b := newReplayBed(t, "tui-walk-group-discard")
	b.park(4)
	s := startTerm(t, 120, 30, b.env, "--actor", "ana@bastion", "--queue", bedParking)
	s.waitFor("all 4 messages, 1 group")
	s.keys("/")
	s.typeText("tenant=acme")
	s.keys("Enter")
	s.waitFor("where tenant=acme")
	s.keys("x")
	s.waitFor("Discard 4 messages", "tenant=acme")
	s.typeText("replayed by hand in INC-7")
	s.keys("Enter")
	s.waitFor("Discard for good?")
	s.keys("y")
	s.waitFor("done: discarded 4 from " + bedParking)
	b.waitDepth(bedParking, 0)

	s.keys("J")
	scr := s.waitFor("chain verified", "replayed by hand")
	if n := strings.Count(scr, "replayed by hand"); n != 1 {
		t.Errorf("the discard takes %d rows of the journal screen, want one with its outcome:\n%s", n, scr)
	}
	s.keys("q")
	waitExit(t, s)
	var decision map[string]any
	for _, e := range journalEntries(t, b.journal) {
		if e.Action == triage.ActionDiscard && e.Details["step"] == "decision" {
			decision = e.Details
		}
	}
	sel, _ := decision["selection"].(string)
	if !strings.Contains(sel, "rejected") || !strings.Contains(sel, "tenant=acme") || decision["where"] == nil {
		t.Errorf("the decision does not name its group and filter: %v", decision)
	}
}

// TestTUIWalkAOneMiBPayloadWrapsWithoutStrayLines: a 1 MiB body of one long
// word fills every line of the payload; no line holds a few stray cells.
func TestTUIWalkAOneMiBPayloadWrapsWithoutStrayLines(t *testing.T) {
	cfg := brokertest.NewVhost(t, "tui-walk-mib")
	conn := plant(t, cfg, nil, []plantedQueue{{name: "blobs.parking"}})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	body := `{"blob":"` + strings.Repeat("x", 1<<20) + `"}`
	if err := ch.Publish("", "blobs.parking", false, false, amqp.Publishing{MessageId: "blob-1", ContentType: "application/json", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, cfg, "blobs.parking", 1)
	s := startTerm(t, 80, 30, brokerEnv(t, cfg), "--journal", filepath.Join(t.TempDir(), "journal.db"), "--queue", "blobs.parking")
	s.waitFor("the only message")
	s.keys("Enter")
	s.waitFor("blob-1")
	s.keys("Enter")
	s.waitFor("message blob-1")
	s.scrollTo("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
	for range 3 {
		s.keys("PageDown")
		time.Sleep(200 * time.Millisecond)
		scr := s.screen()
		for _, l := range strings.Split(scr, "\n") {
			trimmed := strings.TrimSpace(l)
			if strings.Trim(trimmed, "x") == "" && trimmed != "" && len(trimmed) < 40 {
				t.Fatalf("a stray line of %d cells in the payload: %q\n%s", len(trimmed), l, scr)
			}
		}
	}
}

// TestWalkPlansAndJournalDetailsUseSnakeCaseAndDurationStrings: what a
// script reads — a replay plan's --json and the journal export of the run —
// has snake_case keys and durations a person can read ("10s").
func TestWalkPlansAndJournalDetailsUseSnakeCaseAndDurationStrings(t *testing.T) {
	b := newReplayBed(t, "walk-json-keys")
	b.park(3)
	plan := runDlqt(t, b.env, "replay", bedParking, "--group", "rejected", "--observe", "1s", "--json")
	if plan.code != 0 {
		t.Fatalf("replay --json: exit %d: %s", plan.code, plan.stderr)
	}
	assertSnakeCase(t, "the plan", plan.stdout)
	durationString := regexp.MustCompile(`"observe":\s*"1s"`)
	if !durationString.MatchString(plan.stdout) {
		t.Errorf("the plan's observe is not a duration string: %s", plan.stdout)
	}
	if r := runDlqt(t, b.env, "replay", bedParking, "--group", "rejected", "--rate", "50", "--canary", "1", "--observe", "1s", "--yes"); r.code != 0 {
		t.Fatalf("replay --yes: exit %d: %s", r.code, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "journal.jsonl")
	if r := runDlqt(t, b.env, "journal", "export", "--out", out); r.code != 0 {
		t.Fatalf("journal export: exit %d: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	assertSnakeCase(t, "the journal export", string(data))
	if !durationString.Match(data) {
		t.Errorf("the exported replay options keep nanoseconds:\n%s", data)
	}
}

// assertSnakeCase fails on any object key of the JSON (one document or
// JSON lines) that is not snake_case, such as Go's "Group" or "IDs".
func assertSnakeCase(t *testing.T, what, doc string) {
	t.Helper()
	snake := regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if !snake.MatchString(k) {
					t.Errorf("%s has the key %q", what, k)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s is not JSON: %v\n%s", what, err, doc)
		}
		walk(v)
	}
}

// TestTUIWalkTheQueuesScreenMarksASourceTheDoctorSaysDrops: orders.work
// dead-letters into orders.parking with one of its routing keys and loses
// the other's; the queues screen lists it as a source and says it drops,
// as the doctor does, instead of contradicting it.
func TestTUIWalkTheQueuesScreenMarksASourceTheDoctorSaysDrops(t *testing.T) {
	cfg := brokertest.NewVhost(t, "tui-walk-dropped")
	plant(t, cfg, map[string]string{"orders": "direct", "work.dlx": "direct"}, []plantedQueue{
		{name: "orders.parking", binds: [][2]string{{"work.dlx", "order.created"}}},
		{name: "orders.work", args: amqp.Table{"x-dead-letter-exchange": "work.dlx"},
			binds: [][2]string{{"orders", "order.created"}, {"orders", "order.cancelled"}}},
	})
	s := startTerm(t, 140, 30, brokerEnv(t, cfg), "--journal", filepath.Join(t.TempDir(), "journal.db"))
	scr := s.waitFor("orders.parking", "doctor: 1 error", "orders.work (dropped!)")
	if !regexp.MustCompile(`(?m)orders\.parking .*orders\.work \(dropped!\)`).MatchString(scr) {
		t.Errorf("the mark is not on orders.parking's row:\n%s", scr)
	}
	s.keys("D")
	scr = s.waitFor("ERROR", "dlx-unroutable", "orders.work")
	if i, j := strings.Index(scr, "ERROR"), strings.Index(scr, "ADVISORY"); j >= 0 && j < i {
		t.Errorf("an advisory comes before the error:\n%s", scr)
	}
}

// TestTUIWalkResumingAReplayWithNothingLeftToPublish: a replay whose every
// message was published and acked but whose dlqt died before it wrote the
// finish (the journal of a real run, less its finish entry) has nothing
// left to send: the banner says so, never "(0 of 6 not done)", and the
// resume screen offers to close it, not a canary of nothing.
func TestTUIWalkResumingAReplayWithNothingLeftToPublish(t *testing.T) {
	b := newReplayBed(t, "tui-walk-resume-none")
	b.park(6)
	if r := runDlqt(t, b.env, "replay", bedParking, "--group", "rejected", "--rate", "50", "--canary", "1", "--observe", "200ms", "--yes"); r.code != 0 {
		t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
	}
	cut := filepath.Join(t.TempDir(), "journal.db")
	j, err := journal.Open(cut, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var replayID string
	for _, e := range journalEntries(t, b.journal) {
		if e.Action == triage.ActionReplayFinish {
			replayID, _ = e.Details["replay_id"].(string)
			continue // dlqt was killed before it wrote this
		}
		if _, err := j.Append(journal.Entry{Time: e.Time, Actor: e.Actor, Host: e.Host, Action: e.Action, Vhost: e.Vhost,
			Queue: e.Queue, MessageIDs: e.MessageIDs, Reason: e.Reason, Details: e.Details}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	if replayID == "" {
		t.Fatal("the replay wrote no finish entry")
	}

	env := append(brokerEnv(t, b.cfg), "DLQT_JOURNAL="+cut)
	s := startTerm(t, 120, 30, env, "--actor", "ana@bastion")
	scr := s.waitFor("INTERRUPTED REPLAY "+replayID, "nothing left to send")
	if regexp.MustCompile(`\(0 of \d+`).MatchString(scr) {
		t.Errorf("the banner counts nothing as not done:\n%s", scr)
	}
	s.keys("U")
	scr = s.waitFor("Resume interrupted replay", "nothing is left to publish", "enter finish")
	if strings.Contains(scr, "canary") {
		t.Errorf("the resume screen offers a canary of nothing:\n%s", scr)
	}
}
