package broker

import (
	"context"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

// The management API's total is older than the queue (10,300 of its 12,300
// messages when its statistics were taken), so it says nothing is missing
// while another dlqt's read of 2,000 is still coming back. The ready count
// growing says so: the read waits for it to stop. Before: it took 10,300
// as the whole queue (a replay planned 10,008 of a group of 12,000).
func TestAStaleTotalDoesNotHideMessagesStillComingBack(t *testing.T) {
	clock := returnClock{poll: time.Millisecond, quiet: time.Second, brief: time.Second, wait: 5 * time.Second, figures: time.Second, settle: 20 * time.Millisecond}
	// quiet bounds a settle: a queue that grows by requeue steps for ever
	// is read after it.
	for _, c := range []struct {
		name   string
		counts []int
		want   int
	}{
		{"still coming back", []int{10300, 10800, 10800, 11500, 12300}, 12300},
		{"all back", []int{12300}, 12300},
		// Applications publishing: a few messages a poll is no requeue,
		// and the read does not wait for a queue that keeps growing.
		{"published to", []int{10301, 10303, 10306, 10310, 10315}, 10303},
	} {
		t.Run(c.name, func(t *testing.T) {
			i := 0
			counts := func() (int, int, error) {
				n := c.counts[min(i, len(c.counts)-1)]
				i++
				return n, 0, nil
			}
			figures := func(context.Context) (triage.Queue, error) {
				return triage.Queue{Name: "q", Messages: 10300}, nil
			}
			r, err := awaitReturns(context.Background(), triage.Queue{Name: "q", Messages: 10300}, release{}, nil, clock, counts, figures, func() bool { return false })
			if err != nil {
				t.Fatal(err)
			}
			if r.ready != c.want || r.returning != 0 {
				t.Fatalf("read %d (returning %d), want %d", r.ready, r.returning, c.want)
			}
		})
	}
}
