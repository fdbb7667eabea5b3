package ui

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

var update = flag.Bool("update", false, "rewrite the golden screens under testdata/golden")

// goldenScreens walks to each screen and names it.
var goldenScreens = []struct {
	name string
	walk func(h *harness)
}{
	{"queues", func(h *harness) {}},
	{"queues-filter", func(h *harness) {
		h.press("filter")
		h.typeText("PAY")
	}},
	{"groups", func(h *harness) { h.openQueue("orders.dlq") }},
	{"messages", func(h *harness) {
		h.openQueue("orders.dlq")
		h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
		h.press("open")
	}},
	{"message", func(h *harness) {
		h.openQueue("orders.dlq")
		h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
		h.press("open")
		h.m.messages.SelectID("m-1001")
		h.press("open")
	}},
	{"reading", func(h *harness) {
		h.m.queues.SelectName("orders.dlq")
		h.m.Update(keyPress("enter")) // the browse command is not run: it stays in flight
		h.m.groups.SetProgress(3200, 10000)
	}},
	{"empty", func(h *harness) { h.send(parkingMsg{id: h.m.refreshQueuesID()}) }},
	{"delivery-cost", func(h *harness) { h.openQueue("payments.parking") }},
	{"discard-confirm", func(h *harness) {
		goLive(h)
		openInvalidSKU(h)
		h.press("mark")
		h.press("mark")
		h.press("discard")
		h.typeText("fixed upstream in INC-1234")
		h.press("open")
	}},
	{"replay-dry-run", func(h *harness) {
		goLive(h)
		h.openQueue("orders.dlq")
		h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
		h.press("replay")
	}},
	{"replay-gauge", func(h *harness) {
		goLive(h)
		h.openQueue("orders.dlq")
		h.m.groups.SelectGroup(triage.ReasonRejected, "INVALID_SKU")
		h.press("replay")
		h.press("open")
		h.m.Update(keyPress("y")) // the replay's command is not run: the test reports for it
		p := gaugeProgress()
		p.Phase, p.ObserveLeft = replay.PhaseObserving, 12*time.Second
		h.m.Update(replayProgressMsg{id: h.m.replay.run.id, p: p})
	}},
	{"groups-where", func(h *harness) {
		h.openQueue("orders.dlq")
		h.press("filter")
		h.typeText("event_type~order died<1h")
	}},
	{"doctor", func(h *harness) {
		h.m.c.opts.Reader = plantedDoctor()
		h.press("doctor")
	}},
	{"doctor-finding", func(h *harness) {
		h.m.c.opts.Reader = plantedDoctor()
		h.press("doctor")
		h.press("open")
	}},
	{"health", func(h *harness) { fillOrders(h, 5, 20, 60, 140, 300, 520) }},
	{"quorum-messages", func(h *harness) {
		h.openQueue("payments.parking")
		h.press("confirm")
		h.press("open")
	}},
}

// fillOrders polls the queue list once per depth of orders.dlq, 5 s apart,
// as the poll timer would: the queue fills faster and faster.
func fillOrders(h *harness, depths ...int) { fillOrdersFrom(h, 0, depths...) }

// fillOrdersFrom is fillOrders starting `from` after fixedNow.
func fillOrdersFrom(h *harness, from time.Duration, depths ...int) {
	h.t.Helper()
	for i, d := range depths {
		for qi := range h.reader.top.Queues {
			if h.reader.top.Queues[qi].Name == "payments.parking" {
				h.reader.top.Queues[qi].Messages = 150 // over depth_warn
			}
			if h.reader.top.Queues[qi].Name == "orders.dlq" {
				h.reader.top.Queues[qi].Messages = d
				h.reader.top.Queues[qi].PublishRate = 0 // dead letters do not count there on 3.10
			}
		}
		at := fixedNow.Add(from + time.Duration(i)*5*time.Second)
		h.m.c.Now = func() time.Time { return at }
		h.send(pollMsg{})
	}
}

// goLive turns the write side on for a golden screen: a journal and the
// fake reader as the sweeper, with a replay id that does not change.
func goLive(h *harness) {
	j, err := journal.Open(filepath.Join(h.t.TempDir(), "journal.db"), time.Second)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { j.Close() })
	h.m.c.opts.Journal = j
	h.m.c.opts.Actions = &Actions{Sweeper: h.reader,
		OpenReplay: func(context.Context, string, string, bool, int) (replay.Port, error) { return nil, nil }}
	h.m.replay.fixedID = "rp-20261130T100000-0a1b2c3d"
}

// TestGoldenScreens renders every screen at 80x24 and 120x40 with NO_COLOR
// and compares it with testdata/golden (go test ./internal/ui -update
// rewrites them).
func TestGoldenScreens(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, s := range goldenScreens {
			name := fmt.Sprintf("%s-%dx%d.txt", s.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, Options{Notice: "showing the bundled demo snapshot"}, size[0], size[1])
				s.walk(h)
				got := h.screen() + "\n"
				path := filepath.Join("..", "..", "testdata", "golden", name)
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/ui -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("screen differs from %s (go test ./internal/ui -update rewrites it)\n--- got ---\n%s--- want ---\n%s", path, got, want)
				}
			})
		}
	}
}

var sgr = regexp.MustCompile("\x1b\\[([0-9;:]*)m")

// TestNoColourMeansNoColour: with NO_COLOR the screen may be bold or
// reversed, but carries no colour at all.
func TestNoColourMeansNoColour(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	for _, s := range goldenScreens {
		h := newHarness(t, Options{}, 120, 40)
		s.walk(h)
		for _, m := range sgr.FindAllStringSubmatch(h.m.Screen(), -1) {
			for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
				switch {
				case len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p != "39" && p != "49",
					len(p) == 3 && p[:2] == "10":
					t.Fatalf("%s: colour SGR %q under NO_COLOR", s.name, m[0])
				}
			}
		}
	}
}

// TestBrokerEscapesNeverReachTheScreen opens a message whose queue name,
// header and payload carry escape sequences and a bidi override.
func TestBrokerEscapesNeverReachTheScreen(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, Options{}, 120, 40)
	h.openQueue(hostileQueue)
	h.press("open")
	h.press("open")
	if h.m.c.focus != screenMessage {
		t.Fatalf("screen %d, want message", h.m.c.focus)
	}
	raw := h.m.Screen()
	for _, bad := range []string{"\x1b[2J", "\x1b[31m", "\x1b]0;", "\a", "\u202e"} {
		if strings.Contains(raw, bad) {
			t.Fatalf("screen carries %q", bad)
		}
	}
	h.mustShow(`\x1b[2Jcleared`, "plain")
	if strings.Contains(ansi.Strip(raw), "\x1b") {
		t.Fatal("an escape survived outside our own styling")
	}
}
