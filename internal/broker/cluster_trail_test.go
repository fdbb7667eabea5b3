package broker_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/trail"
	"github.com/dlqt/dlqt/internal/triage"
)

// streamMirror mirrors a journal to an audit stream as dlqt's does.
type streamMirror struct {
	s      *broker.AuditStream
	writer string
}

func (m streamMirror) Mirror(e journal.Entry) error {
	body, err := trail.Encode(m.writer, e, nil)
	if err != nil {
		return err
	}
	return m.s.Write(context.Background(), body, fmt.Sprintf("%s#%d", m.writer, e.Seq))
}

// clusterTrail appends journal entries, each confirmed by the audit stream
// first, while the stream's leader, the node the writer is connected to, is
// killed with kill -9. Appends fail
// while no member leads (the entry is then not written), and go on once one
// does; every entry the journal holds, each confirmed, is on the stream as
// read from a survivor, and the chain there is whole. It returns the node
// it killed.
func clusterTrail(t *testing.T, c *privnode.Cluster) int {
	cfg := c.NewVhost("trail")
	ctx := context.Background()
	live, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	s, err := live.OpenAuditStream(ctx, "dlqt.audit", broker.Retention{MaxAge: "7D"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Node 0: the one the writer is connected to and, as the stream was
	// declared through it (queue leader locator client-local, the
	// default), its leader. The management API names no leader for a
	// stream.
	leader := 0
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := journal.OpenShared(path, 2*time.Second, journal.Stamp{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	writer := trail.Writer("test", path)
	j.SetMirror(streamMirror{s: s, writer: writer})

	var written, refused atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := j.Append(journal.Entry{Action: triage.ActionTag, Actor: "test", Vhost: cfg.Vhost, Queue: "q", MessageIDs: []string{fmt.Sprint(i)}, Reason: "cluster"}); err != nil {
				refused.Add(1)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			written.Add(1)
		}
	}()
	eventually(t, "200 entries written before the kill", func() string {
		if n := written.Load(); n < 200 {
			return fmt.Sprintf("%d written", n)
		}
		return ""
	})
	c.KillNode(leader)
	at := written.Load()
	eventually(t, "appends going on after the kill", func() string {
		if n := written.Load(); n < at+200 {
			return fmt.Sprintf("%d written since the kill, %d refused", n-at, refused.Load())
		}
		return ""
	})
	close(stop)
	<-done
	t.Logf("stream leader node %d killed after %d entries; %d written in all, %d appends refused meanwhile", leader, at, written.Load(), refused.Load())

	local, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(local)) != written.Load() {
		t.Fatalf("the journal holds %d entries, %d appends succeeded", len(local), written.Load())
	}
	checkOnTheStream(t, nodeConfig(c, (leader+1)%3, cfg.Vhost), local, writer)
	return leader
}

// mirrorTo mirrors j to the audit stream dlqt.audit of cfg's vhost,
// declared through cfg's first node; it returns the stream and j's writer.
func mirrorTo(t *testing.T, cfg broker.Config, j *journal.Journal) (*broker.AuditStream, string) {
	t.Helper()
	ctx := context.Background()
	live, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	s, err := live.OpenAuditStream(ctx, "dlqt.audit", broker.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	writer := trail.Writer("test", j.Path())
	j.SetMirror(streamMirror{s: s, writer: writer})
	return s, writer
}

// checkOnTheStream reads the audit stream through cfg and checks that
// every entry of local (writer's journal) is there and that the chain is
// whole.
func checkOnTheStream(t *testing.T, cfg broker.Config, local []journal.Entry, writer string) {
	t.Helper()
	ctx := context.Background()
	reader, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var rs []trail.Record
	if _, err := reader.ReadAuditStream(ctx, "dlqt.audit", func(offset int64, body []byte) error {
		r, err := trail.Decode(body, offset)
		if err != nil {
			return err
		}
		rs = append(rs, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	chains, problems := trail.Verify(rs, nil)
	cross, _ := trail.CrossCheck(local, writer, rs)
	problems = append(problems, cross...)
	for _, p := range problems {
		t.Errorf("the audit stream after the kill: %s", p)
	}
	replaced := 0
	for _, c := range chains {
		replaced += len(c.Replaced)
	}
	// An attempt the dying leader wrote and never confirmed is on the
	// stream; the entry that took its place names it (journal.Entry.Supersedes).
	t.Logf("the audit stream holds %d records, %d of them attempts never confirmed and replaced; the journal %d entries", len(rs), replaced, len(local))
	if len(rs)-replaced < len(local) {
		t.Errorf("the stream holds %d records that count, the journal %d entries", len(rs)-replaced, len(local))
	}
}
