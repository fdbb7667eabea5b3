package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/demo"
	"github.com/dlqt/dlqt/internal/triage"
)

// The headless commands, run as the built binary against the real broker.

func decodeJSON[T any](t *testing.T, r result) T {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d, stderr: %s", r.code, r.stderr)
	}
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not the JSON expected: %v\n%s", err, r.stdout)
	}
	return v
}

func TestQueuesJSONMarksExactlyTheParkingQueues(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	rows := decodeJSON[[]cli.QueueRow](t, runDlqt(t, brokerEnv(t, cfg), "queues", "--json"))
	byName := map[string]cli.QueueRow{}
	for _, r := range rows {
		if r.Vhost != cfg.Vhost {
			t.Errorf("queue %s: vhost %q, want %q", r.Name, r.Vhost, cfg.Vhost)
		}
		byName[r.Name] = r
	}
	for _, p := range scen.Parking {
		r, ok := byName[p.Queue]
		if !ok || !r.Parking {
			t.Errorf("parking queue %s: listed %v, parking %v", p.Queue, ok, r.Parking)
			continue
		}
		if r.Type != p.Type || r.Messages != scen.Depths[p.Queue] {
			t.Errorf("%s: type %s depth %d, want %s %d", p.Queue, r.Type, r.Messages, p.Type, scen.Depths[p.Queue])
		}
		if len(p.DeadLetteredFrom) > 0 && !slices.Equal(r.DeadLetteredFrom, p.DeadLetteredFrom) {
			t.Errorf("%s: dead_lettered_from %v, want %v", p.Queue, r.DeadLetteredFrom, p.DeadLetteredFrom)
		}
	}
	for _, name := range scen.NotParking {
		if byName[name].Parking {
			t.Errorf("%s is a work queue or retry bucket, not a parking queue", name)
		}
	}
}

func TestGroupsJSONMatchWhatTheBrokerProduced(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	env := brokerEnv(t, cfg)
	for _, p := range scen.Parking {
		if p.DeliveryLimit > 0 {
			continue // TestGroupsRefuseQuorumDeliveryCost
		}
		t.Run(p.Queue, func(t *testing.T) {
			rows := decodeJSON[[]cli.GroupRow](t, runDlqt(t, env, "groups", p.Queue, "--json"))
			var got []demo.GroupCount
			for _, r := range rows {
				got = append(got, demo.GroupCount{Reason: triage.Reason(r.Reason), ReasonCode: r.ReasonCode, Count: r.Count})
				if r.EventTypes == nil {
					t.Errorf("group %s/%s: event_types must be an array, even empty", r.Reason, r.ReasonCode)
				}
				if r.Reason != string(triage.ReasonPublished) && r.Oldest == nil {
					t.Errorf("group %s/%s: a broker death has a time, oldest is null", r.Reason, r.ReasonCode)
				}
			}
			slices.SortFunc(got, func(a, b demo.GroupCount) int {
				if c := strings.Compare(string(a.Reason), string(b.Reason)); c != 0 {
					return c
				}
				return strings.Compare(a.ReasonCode, b.ReasonCode)
			})
			if want := p.Groups(); !slices.Equal(got, want) {
				t.Errorf("groups\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestGroupsRefuseQuorumDeliveryCostWithOneLine(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	var quorum string
	for _, p := range scen.Parking {
		if p.DeliveryLimit > 0 {
			quorum = p.Queue
		}
	}
	r := runDlqt(t, brokerEnv(t, cfg), "groups", quorum, "--json")
	if brokerOf(t, cfg).FreeRequeue {
		// 4.3: dlqt's requeue does not count, the read is free.
		if r.code != 0 || len(decodeJSON[[]cli.GroupRow](t, r)) == 0 {
			t.Fatalf("4.3: exit %d, stderr %q: want the groups", r.code, r.stderr)
		}
		return
	}
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q: want exit 1 and nothing on stdout", r.code, r.stdout)
	}
	assertOneLine(t, r.stderr, "delivery-limit", "--accept-delivery-cost")
}

func TestMessagesJSONAreRedactedSanitisedAndLeaveTheQueueAsItWas(t *testing.T) {
	cfg, scen := scenarioVhost(t)
	env := brokerEnv(t, cfg)
	required := []string{"id", "reason", "reason_code", "event_type", "attempts", "timeline", "headers", "payload", "payload_bytes", "redactions"}
	totalRedactions := 0
	for _, p := range scen.Parking {
		if p.DeliveryLimit > 0 {
			continue
		}
		r := runDlqt(t, env, "messages", p.Queue, "--json")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", p.Queue, r.code, r.stderr)
		}
		for _, secret := range append(scen.Secrets, scen.Hostile...) {
			if strings.Contains(r.stdout, secret) {
				t.Errorf("%s: output contains %q", p.Queue, secret)
			}
		}
		if strings.ContainsAny(r.stdout, "\x1b\x07\u202e") {
			t.Errorf("%s: output carries a raw control character", p.Queue)
		}
		var ids []string
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var obj map[string]any
			if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
				t.Fatalf("%s: a line is not a JSON object: %v: %s", p.Queue, err, sc.Text())
			}
			for _, k := range required {
				if _, ok := obj[k]; !ok {
					t.Errorf("%s: message %v lacks %q", p.Queue, obj["id"], k)
				}
			}
			ids = append(ids, obj["id"].(string))
			totalRedactions += int(obj["redactions"].(float64))
			if obj["reason"] != string(triage.ReasonPublished) && len(obj["timeline"].([]any)) == 0 {
				t.Errorf("%s: %v died in the broker but has an empty timeline", p.Queue, obj["id"])
			}
		}
		if len(ids) != len(p.Messages) {
			t.Errorf("%s: %d messages printed, %d produced", p.Queue, len(ids), len(p.Messages))
		}
		for _, id := range p.MessageIDs() {
			if !slices.Contains(ids, id) {
				t.Errorf("%s: message %s missing from the output", p.Queue, id)
			}
		}
	}
	if totalRedactions == 0 {
		t.Error("the scenarios plant secrets, yet nothing was redacted")
	}
	rows := decodeJSON[[]cli.QueueRow](t, runDlqt(t, env, "queues", "--json"))
	for _, row := range rows {
		if want, ok := scen.Depths[row.Name]; ok && row.Messages != want {
			t.Errorf("after browsing, %s holds %d messages, want %d", row.Name, row.Messages, want)
		}
	}
}

func TestSnapshotFileReadsLikeTheBroker(t *testing.T) {
	cfg, _ := scenarioVhost(t)
	env := brokerEnv(t, cfg)
	file := filepath.Join(t.TempDir(), "incident.json.gz")
	r := runDlqt(t, env, "snapshot", "billing.parking", "orders.dlq.q", "--out", file)
	if r.code != 0 {
		t.Fatalf("snapshot: exit %d: %s", r.code, r.stderr)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file %v mode %v: it holds raw messages and must be private", err, st.Mode())
	}
	offline := append(isolatedEnv(t), "DLQT_AMQP_URL=amqp://guest:guest@127.0.0.1:1/", "DLQT_MGMT_URL=http://127.0.0.1:1")
	for _, q := range []string{"billing.parking", "orders.dlq.q"} {
		live := runDlqt(t, env, "groups", q, "--json")
		off := runDlqt(t, offline, "--snapshot", file, "groups", q, "--json")
		if live.code != 0 || off.code != 0 || live.stdout != off.stdout {
			t.Errorf("%s: live (exit %d) and snapshot (exit %d) differ:\n%s\n---\n%s%s", q, live.code, off.code, live.stdout, off.stdout, off.stderr)
		}
	}
	r = runDlqt(t, offline, "--snapshot", file, "groups", "payments.parking")
	if r.code != 1 {
		t.Errorf("a queue not in the snapshot: exit %d", r.code)
	}
	assertOneLine(t, r.stderr, "payments.parking", "billing.parking")
}

func TestDemoNeedsNoBroker(t *testing.T) {
	env := append(isolatedEnv(t), "DLQT_AMQP_URL=amqp://guest:guest@127.0.0.1:1/", "DLQT_MGMT_URL=http://127.0.0.1:1")
	rows := decodeJSON[[]cli.QueueRow](t, runDlqt(t, env, "--demo", "queues", "--json"))
	parking := 0
	for _, r := range rows {
		if r.Parking {
			parking++
		}
	}
	if parking < 3 {
		t.Errorf("the demo snapshot shows %d parking queues; it should show the scenarios", parking)
	}
	groups := decodeJSON[[]cli.GroupRow](t, runDlqt(t, env, "--demo", "groups", "billing.parking", "--json"))
	reasons := map[string]bool{}
	for _, g := range groups {
		reasons[g.Reason] = true
	}
	for _, want := range []string{"rejected", "expired", "maxlen"} {
		if !reasons[want] {
			t.Errorf("demo billing.parking has no %s group: %v", want, groups)
		}
	}
}

// Every failure is one readable line on stderr and a non-zero exit.
func TestErrorsAreOneClearLine(t *testing.T) {
	cfg, _ := scenarioVhost(t)
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"format": "something else"`), 0o600)
	badConfig := filepath.Join(dir, "config.yaml")
	os.WriteFile(badConfig, []byte("vhots: typo\n"), 0o600)
	withBroker := brokerEnv(t, cfg)
	tests := []struct {
		name  string
		env   []string
		args  []string
		code  int
		words []string
	}{
		{"unknown queue", withBroker, []string{"groups", "no.such.queue"}, 1, []string{"no.such.queue"}},
		{"unknown vhost", withBroker, []string{"--vhost", "dlqt-no-such-vhost", "queues"}, 1, []string{"dlqt-no-such-vhost"}},
		{"bad credentials", withBroker, []string{"--amqp-url", "amqp://guest:wrong@127.0.0.1:5672/", "--mgmt-url", cfg.MgmtURL, "queues"}, 1, []string{"guest"}},
		{"broker down", isolatedEnv(t), []string{"--amqp-url", "amqp://guest:guest@127.0.0.1:1/", "--mgmt-url", "http://127.0.0.1:1", "queues"}, 1, []string{"127.0.0.1:1"}},
		{"missing snapshot", isolatedEnv(t), []string{"--snapshot", filepath.Join(dir, "nope.json"), "queues"}, 1, []string{"nope.json"}},
		{"corrupt snapshot", isolatedEnv(t), []string{"--snapshot", corrupt, "queues"}, 1, []string{"corrupt.json"}},
		{"unknown config key", isolatedEnv(t), []string{"--config", badConfig, "queues"}, 2, []string{"vhots"}},
		{"unknown flag", isolatedEnv(t), []string{"queues", "--jsn"}, 2, []string{"jsn"}},
		{"missing argument", isolatedEnv(t), []string{"groups"}, 2, []string{"QUEUE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runDlqt(t, tt.env, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", r.code, tt.code, r.stderr)
			}
			assertOneLine(t, r.stderr, tt.words...)
			if strings.Contains(r.stderr, "wrong") {
				t.Errorf("a password reached stderr: %s", r.stderr)
			}
		})
	}
}

// assertOneLine checks stderr is a single "dlqt: ..." line naming words.
func assertOneLine(t *testing.T, stderr string, words ...string) {
	t.Helper()
	line := strings.TrimRight(stderr, "\n")
	if strings.Contains(line, "\n") || !strings.HasPrefix(line, "dlqt: ") {
		t.Errorf("want one line starting with 'dlqt: ', got:\n%s", stderr)
	}
	if strings.Contains(line, "goroutine ") || strings.Contains(line, "panic") {
		t.Errorf("a stack trace reached the user: %s", stderr)
	}
	for _, w := range words {
		if !strings.Contains(line, w) {
			t.Errorf("error line does not name %q: %s", w, line)
		}
	}
}
