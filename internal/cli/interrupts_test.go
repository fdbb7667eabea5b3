package cli

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The first SIGINT cancels; the second is heard too (signal.NotifyContext
// swallowed it, so a replay waited out its confirm timeout) and says that
// the confirms in flight are no longer waited for.
func TestASecondInterruptIsHeard(t *testing.T) {
	var errw lockedBuffer
	ctx, stop := Interrupts(&errw)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first SIGINT did not cancel")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(errw.String(), "interrupted again") {
		if time.Now().After(deadline) {
			t.Fatalf("the second SIGINT went unheard: stderr %q", errw.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
