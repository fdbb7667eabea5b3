package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/demo"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// discardVhost is a vhost of the test's own with the scenarios loaded: a
// discard changes the queues, so it never runs on the shared vhost.
func discardVhost(t *testing.T) (broker.Config, demo.Scenarios) {
	t.Helper()
	cfg := brokertest.NewVhost(t, "discard")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	scen, err := demo.LoadScenarios(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, scen
}

// listed is one message as `dlqt messages --json` shows it.
type listed struct {
	ID         string `json:"id"`
	Reason     string `json:"reason"`
	ReasonCode string `json:"reason_code"`
}

func listMessages(t *testing.T, env []string, queue string, extra ...string) []listed {
	t.Helper()
	r := runDlqt(t, env, append([]string{"messages", queue, "--json"}, extra...)...)
	if r.code != 0 {
		t.Fatalf("messages %s: exit %d: %s", queue, r.code, r.stderr)
	}
	var out []listed
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m listed
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("messages --json line: %v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func idsOf(ms []listed) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// readyDepth reads a queue's ready count straight from the broker.
func readyDepth(t *testing.T, cfg broker.Config, queue string) int {
	return brokertest.Depth(t, brokertest.Dial(t, cfg), queue)
}

// waitReady waits for the broker to finish requeueing (asynchronous).
func waitReady(t *testing.T, cfg broker.Config, queue string, want int) {
	brokertest.WaitDepth(t, brokertest.Dial(t, cfg), queue, want)
}

func journalEntries(t *testing.T, path string) []journal.Entry {
	t.Helper()
	j, err := journal.Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// One vhost, one queue, the whole discard story in order: a plan changes
// nothing, refusals change nothing, a group goes exactly, ids go exactly
// with the missing one named, and the journal holds it all and verifies.
func TestDiscardRemovesExactlyTheSelectionAndJournalsIt(t *testing.T) {
	cfg, scen := discardVhost(t)
	var p demo.ParkingScenario
	for _, c := range scen.Parking {
		if c.Type == "classic" && len(c.Groups()) >= 2 {
			p = c
			break
		}
	}
	if p.Queue == "" {
		t.Fatal("no classic parking queue with two groups in the scenarios")
	}
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath, "DLQT_ACTOR=ana@bastion")
	before := listMessages(t, env, p.Queue)
	depth := readyDepth(t, cfg, p.Queue)
	if len(before) != depth || depth == 0 {
		t.Fatalf("read %d messages of %d", len(before), depth)
	}
	g := p.Groups()[0]
	key := string(g.Reason) + "/" + g.ReasonCode
	var inGroup, rest []string
	for _, m := range before {
		if m.Reason == string(g.Reason) && m.ReasonCode == g.ReasonCode {
			inGroup = append(inGroup, m.ID)
		} else {
			rest = append(rest, m.ID)
		}
	}
	if len(inGroup) != g.Count || len(rest) < 3 {
		t.Fatalf("group %s: %d listed, scenario says %d; %d others", key, len(inGroup), g.Count, len(rest))
	}

	t.Run("plan changes nothing", func(t *testing.T) {
		r := runDlqt(t, env, "discard", p.Queue, "--group", key, "--reason", "address fixed upstream")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, want := range append([]string{"discard " + itoa(len(inGroup)) + " message(s) from " + p.Queue, "address fixed upstream", "--yes"}, inGroup...) {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("plan does not show %q:\n%s", want, r.stdout)
			}
		}
		waitReady(t, cfg, p.Queue, depth)
		if got := idsOf(listMessages(t, env, p.Queue)); !slices.Equal(got, idsOf(before)) {
			t.Fatalf("the plan changed the queue: %v", got)
		}
	})

	t.Run("refusals change nothing", func(t *testing.T) {
		for _, args := range [][]string{
			{"discard", p.Queue, "--group", key, "--reason", "   ", "--yes"},
			{"discard", p.Queue, "--group", key, "--yes"},
			{"discard", p.Queue, "--reason", "why", "--yes"},
			{"discard", p.Queue, "--group", key, "--id", rest[0], "--reason", "why", "--yes"},
		} {
			r := runDlqt(t, env, args...)
			if r.code != 2 {
				t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
			}
			assertOneLine(t, r.stderr)
		}
		held, err := journal.Open(jpath, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := runDlqt(t, env, "discard", p.Queue, "--group", key, "--reason", "why", "--yes")
		held.Close()
		if r.code != 1 {
			t.Errorf("locked journal: exit %d: %s", r.code, r.stderr)
		}
		assertOneLine(t, r.stderr, "in use by another dlqt")
		waitReady(t, cfg, p.Queue, depth)
		if n := len(journalEntries(t, jpath)); n != 0 {
			t.Fatalf("refused discards left %d journal entries", n)
		}
	})

	t.Run("group", func(t *testing.T) {
		r := runDlqt(t, env, "discard", p.Queue, "--group", key, "--reason", "address fixed upstream", "--yes")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "discarded "+itoa(len(inGroup))+" message(s)") {
			t.Errorf("stdout: %s", r.stdout)
		}
		waitReady(t, cfg, p.Queue, depth-len(inGroup))
		if got := idsOf(listMessages(t, env, p.Queue)); !slices.Equal(got, rest) {
			t.Fatalf("left %v, want the others in order %v", got, rest)
		}
	})

	t.Run("ids with one missing", func(t *testing.T) {
		gone := []string{rest[2], rest[0]}
		r := runDlqt(t, env, "discard", p.Queue, "--id", gone[0], "--id", "no-such-message", "--id", gone[1], "--reason", "dup of INC-7", "--yes")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1 for the missing id: %s", r.code, r.stderr)
		}
		assertOneLine(t, r.stderr, "no-such-message", "1 selected")
		if !strings.Contains(r.stdout, "discarded 2 message(s)") {
			t.Errorf("stdout: %s", r.stdout)
		}
		left := slices.DeleteFunc(slices.Clone(rest), func(id string) bool { return slices.Contains(gone, id) })
		waitReady(t, cfg, p.Queue, len(left))
		if got := idsOf(listMessages(t, env, p.Queue)); !slices.Equal(got, left) {
			t.Fatalf("left %v, want %v", got, left)
		}
	})

	t.Run("journal", func(t *testing.T) {
		es := journalEntries(t, jpath)
		// The group discard journals the ids it resolved to before its acks.
		if len(es) != 5 {
			t.Fatalf("%d entries, want decision, selected ids and outcome of the group, decision and outcome of the ids: %+v", len(es), es)
		}
		if es[1].Details["step"] != "selected" || !slices.Equal(es[1].MessageIDs, inGroup) {
			t.Errorf("group selected ids = %+v, want %v", es[1], inGroup)
		}
		for _, e := range es {
			if e.Action != triage.ActionDiscard || e.Actor != "ana@bastion" || e.Vhost != cfg.Vhost || e.Queue != p.Queue || e.Host == "" {
				t.Errorf("entry %d = %+v", e.Seq, e)
			}
		}
		es = slices.Delete(es, 1, 2)
		if es[0].Details["step"] != "decision" || es[0].Details["group"] != key || es[0].Reason != "address fixed upstream" {
			t.Errorf("group decision = %+v", es[0])
		}
		if es[1].Details["step"] != "outcome" || !slices.Equal(es[1].MessageIDs, inGroup) {
			t.Errorf("group outcome = %+v, want ids %v", es[1], inGroup)
		}
		if es[2].Details["count"] != float64(3) || !slices.Contains(es[2].MessageIDs, "no-such-message") {
			t.Errorf("ids decision = %+v", es[2])
		}
		if missing, _ := es[3].Details["missing"].([]any); len(missing) != 1 || missing[0] != "no-such-message" || len(es[3].MessageIDs) != 2 {
			t.Errorf("ids outcome = %+v", es[3])
		}
		r := runDlqt(t, env, "journal", "verify")
		if r.code != 0 || !strings.Contains(r.stdout, "entries 1-5 verified") {
			t.Fatalf("verify: exit %d: %s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// A quorum parking queue with a delivery limit needs the same consent to
// discard as to browse, and a refusal journals nothing.
func TestDiscardOnAQuorumQueueNeedsTheDeliveryCostConsent(t *testing.T) {
	cfg, scen := discardVhost(t)
	var p demo.ParkingScenario
	for _, c := range scen.Parking {
		if c.DeliveryLimit > 0 && len(c.MessageIDs()) > 0 {
			p = c
		}
	}
	if p.Queue == "" {
		t.Fatal("no quorum parking queue with a delivery limit in the scenarios")
	}
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath)
	id := p.MessageIDs()[0]
	depth := readyDepth(t, cfg, p.Queue)

	args := []string{"discard", p.Queue, "--id", id, "--reason", "refunded by hand", "--yes"}
	if !brokerOf(t, cfg).FreeRequeue { // 4.3: the sweep's requeue is free, nothing to consent to
		assertDiscardRefusedWithoutConsent(t, env, cfg, jpath, p.Queue, id, depth)
		args = append([]string{"--accept-delivery-cost"}, args...)
	}

	r := runDlqt(t, env, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "discarded 1 message(s)") {
		t.Fatalf("with consent: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	waitReady(t, cfg, p.Queue, depth-1)
	if ids := idsOf(listMessages(t, env, p.Queue, "--accept-delivery-cost")); slices.Contains(ids, id) || len(ids) != depth-1 {
		t.Fatalf("left %v, want all but %s", ids, id)
	}
}

func assertDiscardRefusedWithoutConsent(t *testing.T, env []string, cfg broker.Config, jpath, queue, id string, depth int) {
	t.Helper()
	r := runDlqt(t, env, "discard", queue, "--id", id, "--reason", "refunded by hand", "--yes")
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	assertOneLine(t, r.stderr, "--accept-delivery-cost")
	if n := len(journalEntries(t, jpath)); n != 0 {
		t.Fatalf("a refused discard left %d entries", n)
	}
	if got := readyDepth(t, cfg, queue); got != depth {
		t.Fatalf("depth %d, want %d", got, depth)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
