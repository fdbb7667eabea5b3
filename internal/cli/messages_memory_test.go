package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// lineCounter counts the lines written to it and keeps none of them, so
// what a test measures of the heap is the command's, not the output's.
type lineCounter struct{ lines, bytes int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte("\n"))
	c.bytes += len(p)
	return len(p), nil
}

// TestMessagesOfLargeBodiesKeepToTheMemoryBudget: 90 parked messages of
// 1 MiB each, read by messages and messages --json with a 16 MiB budget,
// grow the live heap by about the budget, not by the 90 MiB of bodies.
// messages --json kept a chunk of 4,096 triaged messages, bodies and
// rendered payloads included, before writing any of it (the whole queue
// here: the live heap grew by about 180 MiB), and the table kept every
// message of its read whole.
func TestMessagesOfLargeBodiesKeepToTheMemoryBudget(t *testing.T) {
	isolate(t)
	const n, budget = 90, 16 << 20
	cfg, conn, _ := parkMany(t, "climembudget", n, strings.Repeat("p", 1<<20))
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost,
		"--memory-budget", fmt.Sprint(budget)}
	for _, c := range []struct {
		name  string
		args  []string
		lines int
	}{
		{"messages --json", []string{"messages", "parking", "--json"}, n},
		{"messages", []string{"messages", "parking"}, n + 2}, // the read's line and the column heads
	} {
		t.Run(c.name, func(t *testing.T) {
			var out lineCounter
			var errOut bytes.Buffer
			stop := make(chan struct{})
			grew := brokertest.LiveHeapGrowth(stop)
			code := Main(context.Background(), append(flags, c.args...), Assets{}, &out, &errOut)
			close(stop)
			peak := grew()
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", c.name, code, errOut.String())
			}
			if out.lines != c.lines {
				t.Fatalf("%s wrote %d lines, want %d", c.name, out.lines, c.lines)
			}
			t.Logf("%s of %d × 1 MiB, %d MiB budget: the live heap grew by at most %.1f MiB", c.name, n, budget>>20, float64(peak)/(1<<20))
			if peak > 2*budget {
				t.Errorf("%s: the live heap grew by %.1f MiB reading %d × 1 MiB with a budget of %d MiB",
					c.name, float64(peak)/(1<<20), n, budget>>20)
			}
			brokertest.WaitDepth(t, conn, "parking", n)
		})
	}
}
