package e2e

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
)

// Issue 23 item 5, end to end: alice's `dlqt replay` is running when only
// its lease connection is closed through the management API (a proxy's
// idle cut, an admin). Her dlqt takes the lease again at once, so bob's
// `dlqt discard` of the same queue is refused with her name.
func TestALeaseCutUnderARunningReplayStillRefusesADiscard(t *testing.T) {
	n := privnode.Start(t)
	bed := newReplayBedOn(t, n.NewVhost("lease-cut-cli"))
	bed.park(20)
	alice := exec.Command(dlqtBin, "replay", bedParking, "--group", "rejected", "--rate", "1", "--yes")
	alice.Env = append(bed.env, "DLQT_ACTOR=alice")
	stderr, err := alice.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = alice.Process.Signal(syscall.SIGKILL); _ = alice.Wait() }()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "published") {
	}
	go func() { // keep the pipe drained
		for sc.Scan() {
		}
	}()
	n.WaitConnections(4) // the bed's, alice's lease and her replay's two
	cut := brokertest.LeaseOwner(t, bed.cfg, bedParking)
	if n.CloseConnectionsNamed("dlqt lease "+bedParking) != 1 {
		t.Fatal("alice's lease connection was not listed")
	}
	// Wait for alice to take the lease again, or for 10 s (before the fix
	// she never did, and bob's discard ran beside her replay).
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if owner := brokertest.LeaseOwner(t, bed.cfg, bedParking); owner != "" && owner != cut {
			break
		}
	}
	bob := runDlqt(t, append(bed.env, "DLQT_ACTOR=bob"), "discard", bedParking, "--group", "rejected", "--reason", "cleanup", "--yes")
	if bob.code == 0 || !strings.Contains(bob.stderr, "alice is replaying "+bedParking) {
		t.Fatalf("bob's discard beside alice's replay after her lease connection was cut: exit %d\n%s%s", bob.code, bob.stdout, bob.stderr)
	}
}
