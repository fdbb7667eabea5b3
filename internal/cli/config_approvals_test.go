package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage/approval"
)

func TestOwnersAndApprovalsConfig(t *testing.T) {
	dir := t.TempDir()
	good := `owners:
  - match: {event_type: "shipment.*"}
    team: shipping
  - match:
      queue: "billing.*"
    team: billing
approvals:
  replay: {min_messages: 1}
  discard: {min_messages: 100}
  edit: {}
  expire_after: 2h
`
	p := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(p, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadFileConfig(p, true)
	if err != nil {
		t.Fatal(err)
	}
	owners, err := ownerRules(p, c.Owners)
	if err != nil {
		t.Fatal(err)
	}
	wantOwners := approval.Owners{{EventType: "shipment.*", Team: "shipping"}, {Queue: "billing.*", Team: "billing"}}
	if !reflect.DeepEqual(owners, wantOwners) {
		t.Errorf("owners = %+v, want %+v", owners, wantOwners)
	}
	wantPolicy := approval.Policy{"replay": {MinMessages: 1}, "discard": {MinMessages: 100}, "edit": {}}
	if !reflect.DeepEqual(c.Approvals.policy, wantPolicy) || c.Approvals.expireAfter != 2*time.Hour {
		t.Errorf("approvals = %+v %s, want %+v 2h", c.Approvals.policy, c.Approvals.expireAfter, wantPolicy)
	}

	bad := []struct {
		name, text, want string
	}{
		{"unknown owners key", "owners:\n  - match: {queue: a}\n    teem: x\n", `:3: owners: unknown key "teem"`},
		{"unknown match key", "owners:\n  - match: {event: a}\n    team: x\n", `:2: owners.match: unknown key "event"`},
		{"no match", "vhost: a\nowners:\n  - team: x\n", `:3: owners[0]: match needs event_type or queue`},
		{"both matches", "owners:\n  - match: {queue: a, event_type: b}\n    team: x\n", `:2: owners[0]: match takes event_type or queue, not both`},
		{"no team", "owners:\n  - match: {queue: a}\n", `:2: owners[0]: team is required`},
		{"bad glob", "owners:\n  - match: {queue: \"a[\"}\n    team: x\n", `:2: owners[0]: bad glob "a["`},
		{"unknown action", "approvals:\n  replay: {}\n  purge: {}\n", `:3: approvals: unknown action "purge"`},
		{"unknown threshold key", "approvals:\n  replay: {max_messages: 3}\n", `:2: approvals.replay: unknown key "max_messages"`},
		{"negative threshold", "approvals:\n\n  discard: {min_messages: -1}\n", `:3: approvals.discard.min_messages must not be negative`},
		{"bad expiry", "approvals:\n  expire_after: soon\n", `:2: approvals.expire_after: want a positive duration`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := loadFileConfig(p, true)
			if err == nil {
				_, err = ownerRules(p, c.Owners)
			}
			if err == nil || !strings.Contains(err.Error(), "config "+p+tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, "config "+p+tc.want)
			}
		})
	}
}
