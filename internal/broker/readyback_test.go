package broker

import (
	"context"
	"testing"
	"time"
)

// A hold right after its plan's read waits for that read's messages to
// come back, up to the plan's bound, and no longer than a brief wait when
// nothing comes back at all.
func TestHoldWaitsForThePlansReadToComeBack(t *testing.T) {
	steps := []int{0, 0, 35, 70, 100}
	i := 0
	count := func() (int, error) {
		i = min(i+1, len(steps)-1)
		return steps[i], nil
	}
	if got, err := readyBack(context.Background(), 0, 2, count); err != nil || got < 2 {
		t.Errorf("came back to %d (%v), want at least the 2 the plan reaches", got, err)
	}
	start := time.Now()
	got, err := readyBack(context.Background(), 5, 10, func() (int, error) { return 5, nil })
	if waited := time.Since(start); err != nil || got != 5 || waited < returnBrief || waited > returnBrief+time.Second {
		t.Errorf("nothing coming back: %d after %s (%v), want 5 after about %s", got, waited, err, returnBrief)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readyBack(ctx, 0, 1, func() (int, error) { return 0, nil }); err == nil {
		t.Error("a cancelled wait gave no error")
	}
}
