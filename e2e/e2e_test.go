package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/demo"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// End-to-end: the built binary in a real terminal (tmux) against the real
// broker, asserting on what a person would see.

// assertClean fails when a planted secret or a hostile string is on screen,
// or when a payload's OSC escape retitled the terminal.
func assertClean(t *testing.T, s *term, scen demo.Scenarios, screen string) {
	t.Helper()
	for _, secret := range scen.Secrets {
		if strings.Contains(screen, secret) {
			t.Errorf("secret %q is on screen:\n%s", secret, screen)
		}
	}
	if strings.ContainsAny(screen, "\x1b\x07\u202e") {
		t.Errorf("a raw control character reached the screen:\n%q", screen)
	}
	if title := s.title(); strings.Contains(title, "pwned") {
		t.Errorf("a payload retitled the terminal: %q", title)
	}
}

func TestTUIWalksTheFourScreensAndTagsIntoTheJournal(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	journalPath := filepath.Join(t.TempDir(), "journal.db")
	s := startTerm(t, 120, 40, brokerEnv(t, cfg), "--journal", journalPath, "--actor", "ana@bastion")

	// 1. the parking queues, not the work queues or retry buckets
	scr := s.waitFor("billing.parking", "orders.dlq.q", "payments.parking", "legacy.events.failed", cfg.Vhost)
	for _, name := range scen.NotParking {
		if strings.Contains(scr, name+" ") {
			t.Errorf("%s is listed as a parking queue:\n%s", name, scr)
		}
	}

	// 2. the groups of legacy.events.failed, reached through the filter
	s.keys("/")
	s.typeText("legacy")
	s.keys("Enter")
	s.waitGone("billing.parking")
	s.keys("Enter")
	scr = s.waitFor("all 8 messages", "webhook_signature_invalid", "LedgerPeriodClosedException @ PostingService.post:118", "legacy_row_unmapped")
	assertClean(t, s, scen, scr)

	// 3. the messages of the first group (published, no code): the plain-text
	// body with the planted escapes and the binary body
	s.keys("Enter")
	scr = s.waitFor("leg-0005", "leg-0006")
	assertClean(t, s, scen, scr)

	// 4. one message: the escape shows as visible text, the password is masked
	s.keys("Enter")
	scr = s.waitFor("message leg-0005", "attempt timeline", "payload", `\x1b]0;pwned\x07`, "password=[RED")
	assertClean(t, s, scen, scr)

	// tag it; the journal gets a chained entry naming who and what
	s.keys("t")
	s.waitFor("Tag message leg-0005")
	s.typeText("poison-import")
	s.keys("Enter")
	s.waitFor("poison-import")

	// back out to the queue list, then quit
	s.keys("Escape")
	s.waitFor("leg-0006")
	s.keys("Escape")
	s.waitFor("webhook_signature_invalid")
	s.keys("Escape")
	s.waitFor("legacy.events.failed", "1 of 4") // the filter is kept
	s.keys("q")
	waitExit(t, s)

	entries := journalEntries(t, journalPath)
	if len(entries) != 1 {
		t.Fatalf("journal has %d entries, want the one tag: %+v", len(entries), entries)
	}
	e := entries[0]
	if e.Action != triage.ActionTag || e.Reason != "poison-import" || e.Actor != "ana@bastion" ||
		e.Vhost != cfg.Vhost || e.Queue != "legacy.events.failed" || len(e.MessageIDs) != 1 || e.MessageIDs[0] != "leg-0005" {
		t.Errorf("journal entry = %+v", e)
	}
	if err := journal.VerifyChain(entries); err != nil {
		t.Errorf("journal does not verify: %v", err)
	}
}

func TestTUIAt80x24WithoutColourShowsTheAttemptTimeline(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	env := append(brokerEnv(t, cfg), "NO_COLOR=1")
	s := startTerm(t, 80, 24, env, "--queue", "orders.dlq.q")

	scr := s.waitFor("customer_tax_profile", "address_invalid", "rejected")
	assertFits(t, scr, 80, 24)
	s.keys("Enter")
	s.waitFor("2 messages")
	s.keys("Enter")
	// seed 002: three retry-bucket expiries, the work queue, the app's retry
	// headers and its failure block, all on the timeline
	scr = s.waitFor("message ord-", "attempt timeline")
	assertFits(t, scr, 80, 24)
	wants := []string{"orders.retry.1.q", "orders.retry.3.q", "x-retry-count", "x-last-error"}
	if brokerOf(t, cfg).Version.AtLeast(3, 13) {
		// The order worker republishes each retry with its x-death, which
		// 3.13 and 4.x ignore: only the last bucket's death is recorded.
		wants = wants[1:]
	}
	for _, want := range wants {
		scr = s.scrollTo(want)
		assertFits(t, scr, 80, 24)
		assertClean(t, s, scen, scr)
	}

	styled, _ := tmuxCmd("capture-pane", "-p", "-e", "-t", s.session).CombinedOutput()
	if sgr := colourSGR(string(styled)); sgr != "" {
		t.Errorf("NO_COLOR is set, yet the screen carries colour (%q)", sgr)
	}
	s.keys("C-c")
	waitExit(t, s)
}

func TestTUIAsksBeforeBrowsingAQuorumQueueWithADeliveryLimit(t *testing.T) {
	// Its own vhost: accepting the cost changes delivery counts.
	cfg := brokertest.NewVhost(t, "e2e-quorum")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	scen, err := demo.LoadScenarios(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := scen.Queue("payments.parking")
	s := startTerm(t, 100, 30, brokerEnv(t, cfg), "--queue", p.Queue)

	if v := brokerOf(t, cfg); v.FreeRequeue {
		// 4.3: nothing to ask; each message says how many counted
		// deliveries (a crash, a closed channel) it has left.
		s.waitFor("delivery_limit", "RabbitMQ "+v.Version.String())
		s.keys("Enter")
		s.waitFor("pay-0001", "peeks")
		s.keys("q")
		waitExit(t, s)
		return
	}
	s.waitFor("Browse a quorum queue with a delivery limit?", "delivery limit  5", "dead-lettered")
	s.keys("n")
	s.waitFor("payments.parking", "billing.parking") // back on the queue list, nothing read
	s.keys("Enter")
	s.waitFor("Browse a quorum queue with a delivery limit?")
	s.keys("y")
	s.waitFor("delivery_limit")
	s.keys("Enter")
	s.waitFor("pay-0001", "deliv", "/5")
	s.keys("q")
	waitExit(t, s)
}

func TestMakeRunFallsBackToTheDemoWhenNoBrokerAnswers(t *testing.T) {
	env := append(isolatedEnv(t), "DLQT_AMQP_URL=amqp://guest:guest@127.0.0.1:1/", "DLQT_MGMT_URL=http://127.0.0.1:1")
	s := startTerm(t, 100, 30, env, "--demo-fallback")
	s.waitFor("DEMO data: no broker answered", "billing.parking", "orders.dlq.q")
	s.keys("q")
	waitExit(t, s)

	// without --demo-fallback, no demo data: a clear error instead
	r := runDlqt(t, env, "queues")
	if r.code == 0 || strings.Contains(r.stdout, "billing.parking") {
		t.Errorf("without a broker, plain dlqt must fail, not show demo data: exit %d\n%s", r.code, r.stdout)
	}
}

func TestTUIOnAnEmptyVhostSaysHowToLoadTheDemo(t *testing.T) {
	cfg := brokertest.NewVhost(t, "e2e-empty")
	s := startTerm(t, 80, 24, brokerEnv(t, cfg))
	s.waitFor("make demo", "dlqt --demo")
	s.keys("q")
	waitExit(t, s)
}

// colourSGR returns the first SGR sequence that sets a colour (30-38, 40-48,
// 90-97, 100-107); resets (39, 49), bold and reverse are not colour.
func colourSGR(screen string) string {
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;]*)m`).FindAllStringSubmatch(screen, -1) {
		for _, p := range strings.Split(m[1], ";") {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return m[0]
			}
		}
	}
	return ""
}

// assertFits checks no line is wider than the terminal and the screen has
// not scrolled past its height.
func assertFits(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) > h {
		t.Errorf("%d lines on a %d-line terminal", len(lines), h)
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > w {
			t.Errorf("line wider than %d: %q", w, l)
		}
	}
}

func waitExit(t *testing.T, s *term) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !s.exited() {
		if time.Now().After(deadline) {
			t.Fatalf("dlqt did not quit:\n%s", s.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
