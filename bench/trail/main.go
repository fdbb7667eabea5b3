// Command trail is the audit-stream benchmark of make bench: what the
// team's trail (README "One trail for the team") adds to each journal
// entry an action writes. In a vhost of its own it appends BENCH_TRAIL_N
// (1,000) entries to a fresh local journal, then as many to another with
// every entry published to a stream and confirmed before it is committed
// (journal.Mirror, as dlqt does, signed with an ed25519 key), and prints p50 and p99 of each append
// and of the stream's part (sign, publish and confirm). A discard journals two entries, a replay two plus
// one per batch of publishes. The vhost is deleted at the end.
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/bench/internal/measure"
	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/trail"
	"github.com/dlqt/dlqt/internal/triage"
)

func main() {
	n := measure.EnvInt("BENCH_TRAIL_N", 1000)
	cfg := broker.Config{AMQPURL: measure.EnvStr("DLQT_TEST_AMQP_URL", broker.DefaultAMQPURL), MgmtURL: measure.EnvStr("DLQT_TEST_MGMT_URL", broker.DefaultMgmtURL)}
	var b [4]byte
	_, _ = rand.Read(b[:])
	cfg.Vhost = "dlqt-bench-" + hex.EncodeToString(b[:])
	err := bench(cfg, n)
	if derr := broker.DeleteVhost(cfg); derr != nil && err == nil {
		err = derr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type streamMirror struct {
	stream *broker.AuditStream
	writer string
	signer ssh.Signer
	took   []time.Duration // of each Mirror: encode, publish, confirm
}

func (m *streamMirror) Mirror(e journal.Entry) error {
	start := time.Now()
	body, err := trail.Encode(m.writer, e, m.signer)
	if err != nil {
		return err
	}
	err = m.stream.Write(context.Background(), body, fmt.Sprintf("%s#%d", m.writer, e.Seq))
	m.took = append(m.took, time.Since(start))
	return err
}

func bench(cfg broker.Config, n int) error {
	if err := broker.CreateVhost(cfg); err != nil {
		return err
	}
	ctx := context.Background()
	live, err := broker.Dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer live.Close()
	stream, err := live.OpenAuditStream(ctx, "dlqt.audit", broker.Retention{})
	if err != nil {
		return err
	}
	defer stream.Close()
	dir, err := os.MkdirTemp("", "dlqt-bench-trail-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("audit stream benchmark: %d journal entries each way, vhost %s\n", n, cfg.Vhost)
	local, err := appends(filepath.Join(dir, "local.db"), n, nil)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "mirrored.db")
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return err
	}
	m := &streamMirror{stream: stream, writer: trail.Writer("bench", path), signer: signer}
	mirrored, err := appends(path, n, m)
	if err != nil {
		return err
	}
	slices.Sort(m.took)
	read, err := live.ReadAuditStream(ctx, "dlqt.audit", func(int64, []byte) error { return nil })
	if err != nil {
		return err
	}
	if read != n {
		return fmt.Errorf("the stream holds %d records, want %d", read, n)
	}
	fmt.Printf("%-26s %10s %10s\n", "journal append", "p50", "p99")
	fmt.Printf("%-26s %10s %10s\n", "local only", pct(local, 50), pct(local, 99))
	fmt.Printf("%-26s %10s %10s\n", "with the audit stream", pct(mirrored, 50), pct(mirrored, 99))
	fmt.Printf("%-26s %10s %10s\n", "  of which the stream", pct(m.took, 50), pct(m.took, 99))
	return nil
}

// appends times n appends to a new journal at path, mirrored through m
// when it is not nil.
func appends(path string, n int, m journal.Mirror) ([]time.Duration, error) {
	j, err := journal.OpenShared(path, 2*time.Second, journal.Stamp{Version: "bench"})
	if err != nil {
		return nil, err
	}
	defer j.Close()
	if m != nil {
		j.SetMirror(m)
	}
	out := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		if _, err := j.Append(journal.Entry{Action: triage.ActionTag, Actor: "bench", Vhost: "/", Queue: "orders.dlq",
			MessageIDs: []string{fmt.Sprintf("m-%06d", i)}, Reason: "make bench"}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out, nil
}

// pct is the p-th percentile of sorted ds.
func pct(ds []time.Duration, p int) time.Duration {
	i := min(len(ds)-1, len(ds)*p/100)
	return ds[i].Round(10 * time.Microsecond)
}
