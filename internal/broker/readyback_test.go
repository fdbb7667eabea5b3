package broker

import (
	"context"
	"testing"
	"time"
)

// A hold right after its plan's read waits for that read's messages to
// come back, up to the plan's bound, through a pause of the broker longer
// than returnBrief (a loaded node returning a quorum queue's messages),
// and gives up after returnQuiet with nothing back.
func TestHoldWaitsForThePlansReadToComeBack(t *testing.T) {
	steps := []int{0, 0, 35, 70, 100}
	i := 0
	count := func() (int, error) {
		i = min(i+1, len(steps)-1)
		return steps[i], nil
	}
	if got, err := readyBack(context.Background(), 0, 2, count, nil, readyWaits); err != nil || got < 2 {
		t.Errorf("came back to %d (%v), want at least the 2 the plan reaches", got, err)
	}
	start := time.Now()
	paused := func() (int, error) { // 4,583 back, then nothing for 2 s, then the rest
		if time.Since(start) < returnBrief+time.Second {
			return 4583, nil
		}
		return 10300, nil
	}
	if got, err := readyBack(context.Background(), 4583, 10300, paused, nil, readyWaits); err != nil || got != 10300 {
		t.Errorf("after a pause of the broker: %d (%v), want all 10300 back", got, err)
	}
	start = time.Now()
	got, err := readyBack(context.Background(), 5, 10, func() (int, error) { return 5, nil }, nil, readyWaits)
	if waited := time.Since(start); err != nil || got != 5 || waited < returnQuiet || waited > returnQuiet+time.Second {
		t.Errorf("nothing coming back: %d after %s (%v), want 5 after about %s", got, waited, err, returnQuiet)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readyBack(ctx, 0, 1, func() (int, error) { return 0, nil }, nil, readyWaits); err == nil {
		t.Error("a cancelled wait gave no error")
	}
}

// While what is missing is still the queue's and nobody else's (coming),
// the wait goes on past returnQuiet with nothing back: a loaded node
// returning a read of 1,000,000 paused longer than that at 711,175, and
// the replay took the rest for gone. Once it is not (taken by another
// consumer), the wait ends after the next returnQuiet.
func TestHoldWaitsOnWhileThePlansReadIsStillTheQueues(t *testing.T) {
	start := time.Now()
	slow := func() (int, error) { // nothing back for returnQuiet and 2 s more, then the rest
		if time.Since(start) < returnQuiet+2*time.Second {
			return 711175, nil
		}
		return 1000000, nil
	}
	asked := 0
	coming := func(context.Context) bool { asked++; return true }
	if got, err := readyBack(context.Background(), 711175, 1000000, slow, coming, readyWaits); err != nil || got != 1000000 || asked != 1 {
		t.Errorf("came back to %d (%v), asked %d times; want all 1000000, asked once", got, err, asked)
	}
	start = time.Now()
	asked = 0
	takenAfterOneAsk := func(context.Context) bool { asked++; return asked == 1 }
	got, err := readyBack(context.Background(), 5, 10, func() (int, error) { return 5, nil }, takenAfterOneAsk, readyWaits)
	if waited := time.Since(start); err != nil || got != 5 || asked != 2 || waited < 2*returnQuiet || waited > 2*returnQuiet+time.Second {
		t.Errorf("taken by another: %d after %s (%v), asked %d; want 5 after about %s, asked twice", got, waited, err, asked, 2*returnQuiet)
	}
}

// A count that still grows is waited for past c.wait, up to c.limit: a
// read of 1,000,000 came back over more than two minutes on a slow day,
// and a hold that stopped at returnWait refused with 52,402 still coming.
// A quiet spell past c.wait ends the wait. (The waits here are scaled
// down: 300 ms quiet, 1 s wait, 5 s limit.)
func TestHoldWaitsWhileThePlansReadStillComesBackPastTheWait(t *testing.T) {
	c := readyWait{quiet: 300 * time.Millisecond, wait: time.Second, limit: 5 * time.Second}
	start := time.Now()
	growing := func() (int, error) { // 10 more every 200 ms: all 100 at 2 s, past the 1 s wait
		return min(100, int(time.Since(start)/(200*time.Millisecond))*10), nil
	}
	always := func(context.Context) bool { return true }
	if got, err := readyBack(context.Background(), 0, 100, growing, always, c); err != nil || got != 100 {
		t.Errorf("a count still growing past the wait: %d (%v), want all 100", got, err)
	}
	start = time.Now()
	stalls := func() (int, error) { // 50 by 500 ms, then nothing more
		return min(50, int(time.Since(start)/(100*time.Millisecond))*10), nil
	}
	got, err := readyBack(context.Background(), 0, 100, stalls, always, c)
	if waited := time.Since(start); err != nil || got != 50 || waited > c.wait+c.quiet+time.Second {
		t.Errorf("a count that stopped: %d after %v (%v), want 50 soon after %v", got, waited, err, c.wait)
	}
}
