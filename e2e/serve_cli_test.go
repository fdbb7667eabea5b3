package e2e

import (
	"bufio"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// leaseExists asks the broker whether the lease queue is there: a passive
// declare of another connection's exclusive queue is refused as locked.
func leaseExists(t *testing.T, bed *replayBed, name string) bool {
	t.Helper()
	ch, err := bed.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	_, err = ch.QueueDeclarePassive(name, false, true, true, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false
	}
	return true
}

// Headless commands over ssh print and exit exactly as the local binary
// does, and the role rules hold.
func TestServeHeadlessCommandsKeepTheirOutputAndExitCodes(t *testing.T) {
	bed := newReplayBed(t, "serve-headless")
	bed.park(3)
	b := startServe(t, bed.env)
	for _, args := range [][]string{
		{"groups", bedParking, "--json"},
		{"queues", "--json"},
		{"groups", "no.such.queue"},
		{"groups", bedParking, "--bogus"},
		{"discard", bedParking, "--group", "rejected"},                  // no reason: usage
		{"discard", bedParking, "--group", "rejected", "--reason", "r"}, // the plan only
	} {
		local, remote := runDlqt(t, bed.env, args...), b.ssh("alice", args...)
		if local.code != remote.code || local.stdout != remote.stdout {
			t.Errorf("%v: local exit %d, over ssh %d\nlocal:\n%s%s\nover ssh:\n%s%s", args, local.code, remote.code,
				local.stdout, local.stderr, remote.stdout, remote.stderr)
		}
	}
	r := b.ssh("bob", "discard", bedParking, "--group", "rejected", "--reason", "r", "--yes")
	if r.code != 2 || !strings.Contains(r.stderr, "discard refused: bob is a viewer") {
		t.Errorf("bob's discard: exit %d, stderr %q", r.code, r.stderr)
	}
	r = b.ssh("alice", "snapshot", "--out", "/tmp/x.json")
	if r.code != 2 || !strings.Contains(r.stderr, "not available over SSH") {
		t.Errorf("snapshot over ssh: exit %d, stderr %q", r.code, r.stderr)
	}
	r = b.ssh("alice", "queues", "--journal", "/tmp/elsewhere.db")
	if r.code != 2 || !strings.Contains(r.stderr, "--journal is not available over SSH") {
		t.Errorf("--journal over ssh: exit %d, stderr %q", r.code, r.stderr)
	}
	bed.waitDepth(bedParking, 3)
	// ssh sends one command line, which the server splits like a shell:
	// an argument with spaces is quoted, as for any ssh command.
	r = b.ssh("alice", "discard", bedParking, "--group", "rejected", "--reason", "'INC-9 duplicates'", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "discarded 3 message(s)") {
		t.Fatalf("alice's discard: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bed.waitDepth(bedParking, 0)
	for _, e := range journalEntries(t, bed.journal) {
		if e.Action == "discard" && (e.Actor != "alice" || e.Reason != "INC-9 duplicates" || e.Details["ssh_fingerprint"] != b.peers["alice"].fingerprint) {
			t.Errorf("discard entry %+v", e)
		}
	}
}

// racer is one replay of the bed's parking queue: over ssh as a user, or
// the local binary.
func racer(b *serveBed, bed *replayBed, who string) *exec.Cmd {
	args := []string{"replay", bedParking, "--group", "rejected", "--rate", "10", "--canary", "2", "--observe", "200ms", "--yes"}
	if who == "" {
		cmd := exec.Command(dlqtBin, args...)
		cmd.Env = append(bed.env, "DLQT_ACTOR=dave@laptop")
		return cmd
	}
	cmd := exec.Command("ssh", append(append(b.sshArgs(who, false), "--"), args...)...)
	cmd.Env = bed.env
	return cmd
}

// Two sessions and a local dlqt replay race for one queue: exactly one
// replays, the others are told who holds it; kill -9 of the holder frees it.
func TestServeLeaseLetsOneOfThreeRacersReplayAndDiesWithItsHolder(t *testing.T) {
	bed := newReplayBed(t, "serve-lease")
	ids := bed.park(30)
	stop := bed.consume(bedOrders)
	b := startServe(t, bed.env)
	var wg sync.WaitGroup
	results := map[string]result{}
	var mu sync.Mutex
	for _, who := range []string{"alice", "carol", ""} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := racer(b, bed, who)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			mu.Lock()
			results[who] = result{out.String(), errb.String(), code}
			mu.Unlock()
		}()
	}
	wg.Wait()
	won := 0
	for who, r := range results {
		if r.code == 0 {
			won++
			continue
		}
		if !strings.Contains(r.stderr, " is replaying "+bedParking+" since ") {
			t.Errorf("racer %q: exit %d without naming the holder:\n%s%s", who, r.code, r.stdout, r.stderr)
		}
	}
	if won != 1 {
		t.Fatalf("%d racers replayed, want exactly 1: %+v", won, results)
	}
	arrived := stop()
	if len(arrived) != len(ids) {
		t.Fatalf("%d of %d messages replayed", len(arrived), len(ids))
	}
	assertLeaseFreedByKill(t, b, bed)
}

// assertLeaseFreedByKill starts a slow local replay, waits until it holds
// the lease (a session is refused), kills it with -9 and sees the lease go.
func assertLeaseFreedByKill(t *testing.T, b *serveBed, bed *replayBed) {
	t.Helper()
	bed.park(20)
	cmd := racer(b, bed, "")
	cmd.Args = append(cmd.Args[:len(cmd.Args)-1], "--rate", "1", "--yes")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "published") {
	}
	r := b.ssh("carol", "replay", bedParking, "--group", "rejected", "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, "dave@laptop is replaying "+bedParking) {
		t.Fatalf("carol beside a running replay: exit %d\n%s", r.code, r.stderr)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	deadline := killed.Add(10 * time.Second)
	for leaseExists(t, bed, "dlqt.lease."+bedParking) {
		if time.Now().After(deadline) {
			t.Fatal("the lease outlived its killed holder by 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the lease went %s after kill -9 of its holder", time.Since(killed).Round(time.Millisecond))
	r = b.ssh("carol", "replay", bedParking, "--group", "rejected", "--rate", "50", "--canary", "2", "--observe", "200ms", "--yes")
	if r.code != 0 {
		t.Fatalf("carol after the holder died: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
