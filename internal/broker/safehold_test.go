package broker

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestHoldBoundKeepsTheFullestNodeWellBelowItsWatermark(t *testing.T) {
	const gib = 1 << 30
	q := triage.Queue{Messages: 1000000, Bytes: 1000000 * 1024} // 1 KiB bodies: 2 KiB a held message
	tests := []struct {
		name  string
		nodes []nodeMemory
		want  int
		hold  int
		why   string // substring; "" = not bound
	}{
		{"plenty of room", []nodeMemory{{Name: "a", MemUsed: 1 * gib, MemLimit: 10 * gib, Running: true}}, 1000000, 1000000, ""},
		{"half the headroom", []nodeMemory{{Name: "a", MemUsed: 1 * gib, MemLimit: 2 * gib, Running: true}}, 1000000, 262144, "node a uses 1.0 GiB of its 2.0 GiB high watermark"},
		{"the tightest node decides", []nodeMemory{
			{Name: "a", MemUsed: 1 * gib, MemLimit: 10 * gib, Running: true},
			{Name: "b", MemUsed: 1 * gib, MemLimit: 2 * gib, Running: true},
		}, 1000000, 262144, "node b"},
		{"a stopped node is ignored", []nodeMemory{
			{Name: "a", MemUsed: 1 * gib, MemLimit: 10 * gib, Running: true},
			{Name: "b", MemUsed: 2 * gib, MemLimit: 2 * gib},
		}, 1000000, 1000000, ""},
		{"over the watermark", []nodeMemory{{Name: "a", MemUsed: 3 * gib, MemLimit: 2 * gib, Running: true}}, 500, 0, "broker memory headroom"},
		{"in alarm", []nodeMemory{{Name: "a", MemUsed: 1 * gib, MemLimit: 2 * gib, MemAlarm: true, Running: true}}, 500, 0, "memory alarm"},
		{"no node read", nil, 500, 500, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hold, why := holdBound(tc.nodes, q, tc.want)
			if hold != tc.hold {
				t.Errorf("hold = %d, want %d (%s)", hold, tc.hold, why)
			}
			if (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want one with %q", why, tc.why)
			}
		})
	}
}
