package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/triage"
)

// filterSnapshot writes a snapshot of one parking queue whose four messages
// differ in every field --where reads, and a config naming the tenant path.
// It returns an environment with that config and the snapshot's path.
func filterSnapshot(t *testing.T, extraConfig string) (env []string, snap string) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	envelope := func(id, event, schema, code, version, tenant, extra string) []byte {
		return []byte(`{"message_id":"` + id + `","event_type":"` + event + `","schema_version":` + schema +
			`,"customer":{"tenant_id":"` + tenant + `"` + extra + `},` +
			`"failure":{"reason_code":"` + code + `","consumer_version":"` + version + `"}}`)
	}
	died := func(id, queue, reason string, at time.Time, body []byte, h triage.Headers) triage.Message {
		x := triage.Headers{
			"x-death": []any{triage.Headers{"queue": queue, "reason": reason, "count": int64(1), "time": at,
				"exchange": "", "routing-keys": []any{queue}}},
			"x-first-death-queue": queue, "x-first-death-reason": reason, "x-first-death-exchange": "",
		}
		for k, v := range h {
			x[k] = v
		}
		return triage.Message{Queue: "park", Exchange: "dlx", RoutingKey: queue, Body: body, Headers: x,
			Properties: triage.Properties{MessageID: id, ContentType: "application/json"}}
	}
	msgs := []triage.Message{
		died("f-1", "work.a", "rejected", now.Add(-10*time.Minute),
			envelope("f-1", "order.created", "2", "address_invalid", "1.4.0", "acme", ""),
			triage.Headers{"x-note": "Card DECLINED by issuer"}),
		died("f-2", "work.b", "expired", now.Add(-3*time.Hour),
			envelope("f-2", "order.created", "3", "", "1.5.0", "globex", ""), nil),
		died("f-3", "work.a", "rejected", now.Add(-40*time.Minute),
			envelope("f-3", "customer.updated", `"4"`, "tax_profile_missing", "1.5.0", "acme", `,"client_secret":"declined-secret"`), nil),
		{Queue: "park", Body: []byte("plain text, no envelope"), Properties: triage.Properties{MessageID: "f-4"}},
	}
	for i := range msgs {
		msgs[i].Position = i
	}
	top := triage.Topology{
		Vhost:     "filters",
		Exchanges: []triage.Exchange{{Name: "dlx", Type: "fanout"}},
		Queues: []triage.Queue{
			{Name: "work.a", Type: triage.QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true},
			{Name: "work.b", Type: triage.QueueClassic, DeadLetterExchange: "dlx", HasDeadLetterExchange: true, MessageTTL: 1000},
			{Name: "park", Type: triage.QueueClassic, Messages: len(msgs)},
		},
		Bindings: []triage.Binding{{Source: "dlx", Destination: "park", DestinationType: "queue"}},
	}
	dir := t.TempDir()
	snap = filepath.Join(dir, "filters.snapshot.json")
	err := broker.WriteSnapshotFile(snap, broker.SnapshotFile{Format: broker.SnapshotFormat, Source: "test", TakenAt: now,
		Topology: top, Batches: []triage.Batch{{Vhost: "filters", Queue: "park", Depth: len(msgs), Limit: 100, TakenAt: now, Messages: msgs}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("filters:\n  tenant_path: customer.tenant_id\n"+extraConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return append(isolatedEnv(t), "DLQT_CONFIG="+cfg), snap
}

// snapArgs puts --snapshot in front of a command's arguments.
func snapArgs(snap string, args ...string) []string {
	return append([]string{"--snapshot", snap}, args...)
}

func whereArgs(exprs []string) []string {
	var out []string
	for _, e := range exprs {
		out = append(out, "--where", e)
	}
	return out
}

// Every field narrows `messages` and `groups` through the binary, with the
// same grammar the triage tests use.
func TestWhereNarrowsMessagesAndGroupsByEveryField(t *testing.T) {
	env, snap := filterSnapshot(t, "")
	tests := []struct {
		exprs []string
		want  []string
	}{
		{[]string{"reason=rejected"}, []string{"f-1", "f-3"}},
		{[]string{"reason=expired,published"}, []string{"f-2", "f-4"}},
		{[]string{"reason_code=address_invalid"}, []string{"f-1"}},
		{[]string{"reason_code="}, []string{"f-2", "f-4"}},
		{[]string{"event_type=order.created"}, []string{"f-1", "f-2"}},
		{[]string{"event_type~CUSTOMER"}, []string{"f-3"}},
		{[]string{"queue=work.a"}, []string{"f-1", "f-3"}},
		{[]string{"queue=work.b"}, []string{"f-2"}},
		{[]string{"died<1h"}, []string{"f-1", "f-3"}},
		{[]string{"died>1h"}, []string{"f-2"}},
		{[]string{"died<20m"}, []string{"f-1"}},
		{[]string{"first_died>30m", "first_died<2h"}, []string{"f-3"}},
		{[]string{"died>" + time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)}, []string{"f-1", "f-3"}},
		{[]string{"schema_version>=3"}, []string{"f-2", "f-3"}},
		{[]string{"schema_version=2"}, []string{"f-1"}},
		{[]string{"consumer_version=1.5.0"}, []string{"f-2", "f-3"}},
		{[]string{"tenant=acme"}, []string{"f-1", "f-3"}},
		{[]string{"tenant=globex"}, []string{"f-2"}},
		{[]string{"text~declined"}, []string{"f-1"}}, // a header; f-3's secret is masked
		{[]string{"text~no envelope"}, []string{"f-4"}},
		{[]string{"reason=rejected", "tenant=acme", "schema_version>2"}, []string{"f-3"}},
		{[]string{"tenant=initech"}, nil},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.exprs, " "), func(t *testing.T) {
			got := idsOf(listMessages(t, env, "park", append(snapArgs(snap), whereArgs(tc.exprs)...)...))
			if !slices.Equal(got, tc.want) {
				t.Errorf("messages --where %v: %v, want %v", tc.exprs, got, tc.want)
			}
			rows := decodeJSON[[]cli.GroupRow](t, runDlqt(t, env, snapArgs(snap, append([]string{"groups", "park", "--json"}, whereArgs(tc.exprs)...)...)...))
			total := 0
			for _, r := range rows {
				total += r.Count
			}
			if total != len(tc.want) {
				t.Errorf("groups --where %v: %d messages in %v, want %d", tc.exprs, total, rows, len(tc.want))
			}
		})
	}
	t.Run("the table says what it kept", func(t *testing.T) {
		r := runDlqt(t, env, snapArgs(snap, "messages", "park", "--where", "tenant=acme")...)
		if r.code != 0 || !strings.Contains(r.stdout, "all 4 messages, 2 where tenant=acme") {
			t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

func TestBadWhereIsOneLineAndExit2(t *testing.T) {
	env, snap := filterSnapshot(t, "")
	for expr, words := range map[string][]string{
		"colour=red":       {`"colour=red"`, "unknown field", "tenant"},
		"reason=expird":    {`"reason=expird"`, "unknown reason"},
		"died>yesterday":   {`"died>yesterday"`, "neither a time"},
		"died=1h":          {`"died=1h"`, "died takes"},
		"reason expired":   {`"reason expired"`, "FIELD OP VALUE"},
		"schema_version>x": {`"schema_version>x"`, "compares numbers"},
	} {
		for _, cmd := range []string{"messages", "groups"} {
			r := runDlqt(t, env, snapArgs(snap, cmd, "park", "--where", "reason=rejected", "--where", expr)...)
			if r.code != 2 || r.stdout != "" {
				t.Errorf("%s --where %s: exit %d, stdout %q", cmd, expr, r.code, r.stdout)
			}
			assertOneLine(t, r.stderr, append([]string{"--where"}, words...)...)
		}
	}
	// Without filters.tenant_path, tenant= is no longer refused (issue 12):
	// it looks for the common keys, and here (the tenant is nested under
	// customer) finds none and says so in one line naming the setting.
	noTenant := isolatedEnv(t)
	r := runDlqt(t, noTenant, snapArgs(snap, "messages", "park", "--where", "tenant=acme")...)
	if r.code != 0 {
		t.Errorf("tenant without a path: exit %d", r.code)
	}
	assertOneLine(t, r.stderr, "filters.tenant_path", "none of tenant, tenant_id")
}

// discard --group R --where event_type=E takes exactly the messages of the
// group that match, on the real broker; the plan and the journal's decision
// name the filter, and every other message stays in the queue.
func TestDiscardWhereNarrowsTheGroupOnTheBroker(t *testing.T) {
	cfg, scen := discardVhost(t)
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath, "DLQT_ACTOR=ana@bastion")

	// A queue and reason whose messages carry two event types or more, so
	// the filter narrows the group to a strict, non-empty part of it.
	var queue, reason, event string
	var before []cli.MessageRow
	for _, p := range scen.Parking {
		if p.Type != triage.QueueClassic || queue != "" {
			continue
		}
		ms := decodeLines[cli.MessageRow](t, runDlqt(t, env, "messages", p.Queue, "--json"))
		types := map[string]map[string]bool{}
		for _, m := range ms {
			if m.EventType == "" {
				continue
			}
			if types[m.Reason] == nil {
				types[m.Reason] = map[string]bool{}
			}
			types[m.Reason][m.EventType] = true
		}
		for r, ts := range types {
			if len(ts) >= 2 {
				for e := range ts {
					queue, reason, event, before = p.Queue, r, e, ms
					break
				}
				break
			}
		}
	}
	if queue == "" {
		t.Fatal("no classic parking queue has a reason with two event types in the scenarios")
	}
	var chosen, kept []string
	for _, m := range before {
		if m.Reason == reason && m.EventType == event {
			chosen = append(chosen, m.ID)
		} else {
			kept = append(kept, m.ID)
		}
	}
	where := "event_type=" + event

	r := runDlqt(t, env, "discard", queue, "--group", reason, "--where", where, "--reason", "replayed by hand")
	if r.code != 0 {
		t.Fatalf("plan: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range append([]string{"discard " + itoa(len(chosen)) + " message(s)", "selection: group " + reason + " where " + where}, chosen...) {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan does not show %q:\n%s", want, r.stdout)
		}
	}
	for _, id := range kept {
		if strings.Contains(r.stdout, "  "+id+"  ") {
			t.Errorf("plan lists %s, which the filter excludes:\n%s", id, r.stdout)
		}
	}
	waitReady(t, cfg, queue, len(before))

	if r := runDlqt(t, env, "discard", queue, "--id", chosen[0], "--where", where, "--reason", "x", "--yes"); r.code != 2 {
		t.Errorf("--id with --where: exit %d: %s", r.code, r.stderr)
	} else {
		assertOneLine(t, r.stderr, "--where", "--id")
	}

	r = runDlqt(t, env, "discard", queue, "--group", reason, "--where", where, "--reason", "replayed by hand", "--yes")
	if r.code != 0 {
		t.Fatalf("discard: exit %d: %s", r.code, r.stderr)
	}
	waitReady(t, cfg, queue, len(kept))
	if got := idsOf(listMessages(t, env, queue)); !slices.Equal(got, kept) {
		t.Errorf("left in %s: %v, want %v", queue, got, kept)
	}
	var decision, outcome bool
	for _, e := range journalEntries(t, jpath) {
		switch e.Details["step"] {
		case "decision":
			sel, _ := e.Details["selection"].(string)
			decision = sel == "group "+reason+" where "+where
		case "outcome":
			outcome = slices.Equal(e.MessageIDs, chosen)
		}
	}
	if !decision || !outcome {
		t.Errorf("journal: decision names the filter %v, outcome lists exactly %v: %v", decision, chosen, outcome)
	}
}

// decodeLines decodes one JSON value per line of a command's stdout.
func decodeLines[T any](t *testing.T, r result) []T {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out []T
	for line := range strings.SplitSeq(strings.TrimSpace(r.stdout), "\n") {
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("not a JSON line: %v: %s", err, line)
		}
		out = append(out, v)
	}
	return out
}

// replay --group R --where event_type=E plans exactly the matching part of
// the group (a plan only: nothing is published), and names the filter.
func TestReplayWhereNarrowsThePlan(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+filepath.Join(t.TempDir(), "journal.db"))
	for _, p := range scen.Parking {
		if p.Type != triage.QueueClassic {
			continue
		}
		byReason := map[string]map[string]int{} // reason -> event type -> count
		for _, m := range p.Messages {
			if m.EventType == "" {
				continue
			}
			if byReason[string(m.Reason)] == nil {
				byReason[string(m.Reason)] = map[string]int{}
			}
			byReason[string(m.Reason)][m.EventType]++
		}
		for reason, types := range byReason {
			if len(types) < 2 {
				continue
			}
			for event, n := range types {
				where := "event_type=" + event
				r := runDlqt(t, env, "replay", p.Queue, "--group", reason, "--where", where)
				if r.code != 0 && !strings.Contains(r.stdout, "problem:") {
					t.Fatalf("plan: exit %d: %s", r.code, r.stderr)
				}
				want := itoa(n) + " message(s) of " + p.Queue + " (group " + reason + " where " + where + ")"
				if !strings.Contains(r.stdout, want) {
					t.Errorf("plan does not say %q:\n%s", want, r.stdout)
				}
				if !strings.Contains(r.stdout, "nothing was changed") && r.code == 0 {
					t.Errorf("a plan without --yes must change nothing:\n%s", r.stdout)
				}
				bad := runDlqt(t, env, "replay", p.Queue, "--id", "x", "--where", where)
				if bad.code != 2 {
					t.Errorf("--id with --where: exit %d", bad.code)
				}
				assertOneLine(t, bad.stderr, "--where", "--id")
				return
			}
		}
	}
	t.Fatal("no classic parking queue has a reason with two event types in the scenarios")
}
