package ui

import (
	"context"
	"strings"
	"testing"
)

// The permission check at startup takes away exactly the actions it rules
// out, says why on the note line and when their keys are pressed, and a
// check that could not be made takes nothing away.
func TestPermissionCheckTurnsOffOnlyWhatItRulesOut(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	const lease = "user ana has no configure permission on the lease queues dlqt.lease.* in vhost shop (tried)"
	const watch = "user ana has no configure permission on server-named queues amq.gen-* in vhost shop (tried)"
	cases := []struct {
		name              string
		acc               Access
		note              string
		discardOn, replay bool
		discardKeyShows   string
	}{
		{"both off: read-only with the reason", Access{Discard: lease, Replay: lease, Fix: "rabbitmqctl set_permissions -p shop ana x y z"},
			"note: read-only: " + lease + "; grant it: rabbitmqctl set_permissions", false, false, "discard is off: " + lease},
		{"replay alone off", Access{Replay: watch, Fix: "rabbitmqctl set_permissions -p shop ana x y z"},
			"note: replay is off: " + watch, true, false, ""},
		{"not checked: nothing assumed", Access{Note: "could not check permissions: management API: 401"},
			"note: could not check permissions: management API: 401", true, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			h := newHarness(t, Options{Journal: openJournal(t), CheckAccess: func(context.Context) Access { asked++; return tc.acc }}, 200, 40)
			if asked != 1 {
				t.Fatalf("checked %d times at startup, want once", asked)
			}
			h.mustShow(tc.note)
			k := h.m.c.Keys
			if k.Discard.Enabled() != tc.discardOn || k.Replay.Enabled() != tc.replay || k.ResumeReplay.Enabled() != tc.replay || !k.Reveal.Enabled() {
				t.Errorf("discard %v replay %v resume %v reveal %v: want discard %v, replay and resume %v, reveal on",
					k.Discard.Enabled(), k.Replay.Enabled(), k.ResumeReplay.Enabled(), k.Reveal.Enabled(), tc.discardOn, tc.replay)
			}
			if !tc.replay {
				h.send(keyPress("R"))
				h.mustShow("replay is off: " + tc.acc.Replay)
				if err := h.m.c.mayAct("replay"); err == nil || !strings.Contains(err.Error(), tc.acc.Replay) {
					t.Errorf("mayAct(replay) = %v", err)
				}
			}
			if tc.discardKeyShows != "" {
				h.send(keyPress("x"))
				h.mustShow(tc.discardKeyShows)
			}
			if tc.discardOn && h.m.c.mayAct("discard") != nil {
				t.Errorf("discard refused: %v", h.m.c.mayAct("discard"))
			}
		})
	}
}

// Read-only mode by setting has nothing to check.
func TestReadOnlyModeAsksNoPermissionCheck(t *testing.T) {
	asked := false
	newHarness(t, Options{Journal: openJournal(t), ReadOnly: true, CheckAccess: func(context.Context) Access { asked = true; return Access{} }}, 80, 24)
	if asked {
		t.Error("a read-only TUI checked permissions")
	}
}
