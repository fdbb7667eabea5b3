package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// The plans' JSON is a contract with scripts: these pin every key, and
// that empty lists are [] (a script does `.ids | length`, never a null check).
func TestReplayPlanJSON(t *testing.T) {
	k := triage.GroupKey{Reason: triage.ReasonRejected, Code: "address_invalid"}
	p := replay.Plan{
		ID: "r-1", Vhost: "prod", Queue: "billing.parking", Selection: triage.Selection{Group: &k},
		Items:        replay.ItemsOf(replay.Item{ID: "m-1"}, replay.Item{ID: "m-2"}),
		Destinations: []replay.Destination{{Route: triage.Route{Exchange: "billing", RoutingKey: "invoice"}, Count: 2, Original: true, Allowed: true}},
		Allowed:      true,
		Options:      replay.Options{Canary: 5, CanaryRate: 1, Observe: 30 * time.Second, Rate: 50, ConfirmTimeout: time.Minute},
	}
	in := triage.Inspection{Batch: triage.Batch{Depth: 900, Messages: make([]triage.Message, 500)}}
	got := jsonOf(t, replayPlanJSON(p, in))
	want := `{
  "action": "replay",
  "vhost": "prod",
  "queue": "billing.parking",
  "selection": "group rejected/address_invalid",
  "count": 2,
  "ids": [
    "m-1",
    "m-2"
  ],
  "missing": [],
  "read": 500,
  "depth": 900,
  "truncated": true,
  "problems": [],
  "replay_id": "r-1",
  "destinations": [
    {
      "route": {
        "exchange": "billing",
        "routing_key": "invoice"
      },
      "count": 2,
      "original": true,
      "allowed": true,
      "queues": []
    }
  ],
  "unroutable": [],
  "allowed": true,
  "options": {
    "rate": 50,
    "canary": 5,
    "canary_rate": 1,
    "max_backlog": 0,
    "observe": "30s",
    "confirm_timeout": "1m0s"
  },
  "revisions": {}
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDiscardPlanJSON(t *testing.T) {
	req := triage.DiscardRequest{Queue: "orders.dlq.q", Reason: "dup", Selection: triage.Selection{IDs: []string{"a", "gone"}}}
	in := triage.Inspection{Batch: triage.Batch{Vhost: "v", Depth: 2, Messages: make([]triage.Message, 2)}}
	got := jsonOf(t, discardPlanJSON(req, in, []triage.Triaged{{ID: "a"}}))
	want := `{
  "action": "discard",
  "vhost": "v",
  "queue": "orders.dlq.q",
  "selection": "2 message id(s)",
  "count": 1,
  "ids": [
    "a"
  ],
  "missing": [
    "gone"
  ],
  "read": 2,
  "depth": 2,
  "truncated": false,
  "problems": [],
  "reason": "dup"
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// fullscan --json without --yes printed nothing on stdout, where discard
// and replay print their plan: a script read empty input. It prints the
// plan, dialling no broker.
func TestFullScanPlanJSON(t *testing.T) {
	isolate(t)
	stdout, stderr, code := run(t, Assets{}, "--amqp-url", "amqp://guest:guest@127.0.0.1:1/", "--vhost", "shop",
		"fullscan", "orders.dlq.q", "--json", "--window", "64")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var plan map[string]any
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	if plan["action"] != "fullscan" || plan["vhost"] != "shop" || plan["queue"] != "orders.dlq.q" || plan["window"] != 64.0 {
		t.Errorf("plan %v", plan)
	}
	if effects, _ := plan["effects"].([]any); len(effects) == 0 {
		t.Errorf("plan without effects: %v", plan)
	}
	if problems, ok := plan["problems"].([]any); !ok || len(problems) != 0 {
		t.Errorf("problems %v; want []", plan["problems"])
	}
}

// A destination that is a retry bucket says so in the plan's JSON, with
// what it feeds and the route offered to skip it, sanitised as the route is.
func TestReplayPlanJSONNamesARetryBucket(t *testing.T) {
	p := replay.Plan{ID: "r-2", Queue: "orders.dlq", Items: replay.ItemsOf(replay.Item{ID: "o-1"}), Allowed: true,
		Destinations: []replay.Destination{{Route: triage.Route{RoutingKey: "orders.retry.1"}, Count: 1, Original: true, Allowed: true,
			RetryBucket: &triage.RetryHop{Bucket: "orders.retry.1\x1b[2J", Next: triage.Route{RoutingKey: "orders.q"}, Feeds: []string{"orders.q"}}}}}
	got := jsonOf(t, replayPlanJSON(p, triage.Inspection{}))
	var back struct {
		Destinations []struct {
			RetryBucket struct {
				Bucket string       `json:"bucket"`
				Next   triage.Route `json:"next"`
				Feeds  []string     `json:"feeds"`
			} `json:"retry_bucket"`
		} `json:"destinations"`
	}
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	h := back.Destinations[0].RetryBucket
	if h.Bucket != `orders.retry.1\x1b[2J` || h.Next.RoutingKey != "orders.q" || len(h.Feeds) != 1 || h.Feeds[0] != "orders.q" {
		t.Errorf("retry_bucket = %+v in\n%s", h, got)
	}
}

// A plan made from a read kept as an index (every headless replay and
// discard) has no messages in its batch, only their count: its JSON said
// "read": 0 of a queue read whole.
func TestAPlansJSONCountsAnIndexedRead(t *testing.T) {
	p := replay.Plan{ID: "r-3", Queue: "orders.dlq", Items: replay.ItemsOf(replay.Item{ID: "o-1"})}
	in := triage.Inspection{Batch: triage.Batch{Depth: 2000, Read: 2000}}
	var back struct {
		Read  int `json:"read"`
		Depth int `json:"depth"`
	}
	if err := json.Unmarshal([]byte(jsonOf(t, replayPlanJSON(p, in))), &back); err != nil {
		t.Fatal(err)
	}
	if back.Read != 2000 || back.Depth != 2000 {
		t.Errorf("read %d of depth %d; want 2000 of 2000", back.Read, back.Depth)
	}
}
