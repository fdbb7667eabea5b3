package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/triage"
)

// quorumParking is a quorum parking queue whose delivery limit a few
// browses and a lost hold cannot reach; dlqt is given consent to pay.
var quorumParking = amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(1000)}

// On a 3-node cluster, the leader of a quorum parking queue is killed with
// kill -9 while dlqt browses it. dlqt, given every node, goes on with a
// surviving one; every message is still there, checked by id. The same
// fault during a replay: it ends, a resume finishes it, nothing is lost.
// And the audit stream's leader killed while entries are written to it:
// no confirmed entry is lost (clusterTrail).
func TestClusterSurvivesTheLeadersDeath(t *testing.T) {
	brokertest.SkipShort(t)
	c := privnode.StartCluster(t, 3)
	t.Run("browse", func(t *testing.T) {
		c.StartNode(clusterBrowse(t, c))
	})
	t.Run("audit stream", func(t *testing.T) {
		c.StartNode(clusterTrail(t, c))
	})
	t.Run("replay", func(t *testing.T) {
		clusterReplay(t, c)
	})
}

// clusterSetup makes a vhost with a quorum parking queue of n messages and
// returns dlqt's config (every node, the queue's leader first), the
// leader's index, a fixture on another node and the parked ids.
func clusterSetup(t *testing.T, c *privnode.Cluster, prefix string, n int, declare func(*fixture)) (broker.Config, int, *fixture, []string) {
	t.Helper()
	cfg := c.NewVhost(prefix)
	f := fixtureOn(t, nodeConfig(c, 0, cfg.Vhost))
	declare(f)
	f.declare("parked", quorumParking)
	ids := make([]string, n)
	var last *amqp.DeferredConfirmation
	for i := range n {
		p := testMessage(i, []byte(`{"n":1}`))
		p.Headers["x-original-exchange"] = "ledger"
		p.Headers["x-original-routingKey"] = "entry.posted"
		dc, err := f.ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "parked", false, false, p)
		if err != nil {
			t.Fatal(err)
		}
		ids[i], last = p.MessageId, dc
	}
	if !last.Wait() {
		t.Fatal("the broker nacked a parked message")
	}
	leader := c.Leader(cfg.Vhost, "parked")
	dlqt := c.Config(leader)
	dlqt.Vhost = cfg.Vhost
	t.Logf("leader of parked: node %d (%s); dlqt gets %s", leader, c.Nodes[leader].Name, dlqt.AMQPURL)
	return dlqt, leader, fixtureOn(t, nodeConfig(c, (leader+1)%3, cfg.Vhost)), ids
}

// nodeConfig is node i alone, on vhost.
func nodeConfig(c *privnode.Cluster, i int, vhost string) broker.Config {
	cfg := c.Nodes[i].Config()
	cfg.Vhost = vhost
	return cfg
}

func clusterBrowse(t *testing.T, c *privnode.Cluster) int {
	const n = 4000
	cfg, leader, check, all := clusterSetup(t, c, "browse", n, func(*fixture) {})
	ctx := context.Background()
	live, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	before := live.Describe()

	// The browse's progress callback waits while the leader dies, so the
	// kill surely lands mid-browse.
	reading, killed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts := triage.BrowseOptions{Limit: 10000, AcceptDeliveryCost: true, Progress: func(read, _ int) {
		if read >= 500 {
			once.Do(func() { close(reading); <-killed })
		}
	}}
	type outcome struct {
		b   triage.Batch
		err error
	}
	done := make(chan outcome, 1)
	go func() { b, err := live.Browse(ctx, "parked", opts); done <- outcome{b, err} }()
	select {
	case <-reading:
	case got := <-done:
		t.Fatalf("the browse ended before 500 messages: %d read, err %v", len(got.b.Messages), got.err)
	}
	c.KillNode(leader)
	close(killed)
	var got outcome
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the browse still runs 60 s after the leader died: hung")
	}
	t.Logf("browse during the kill: %d of %d read, err %v", len(got.b.Messages), n, got.err)
	if got.err != nil && strings.Contains(got.err.Error(), "\n") {
		t.Errorf("the browse's error is not one line: %q", got.err)
	}
	if got.err != nil && strings.Contains(got.err.Error(), "cannot decode") {
		t.Errorf("a lost node is blamed on a message: %q", got.err)
	}

	// A retry reaches a surviving node. The new leader takes a few seconds
	// to put back what the dead connection held, so retry until it has.
	opts.Progress = nil
	var seen []string
	eventually(t, "a browse of every parked message on a surviving node", func() string {
		b, err := live.Browse(ctx, "parked", opts)
		if err != nil {
			return err.Error()
		}
		seen = messageIDs(b.Messages)
		if len(seen) < n {
			return fmt.Sprintf("%d of %d read", len(seen), n)
		}
		return ""
	})
	if after := live.Describe(); after == before {
		t.Errorf("Describe still names the dead leader: %s", after)
	}
	if missing := missingIDs(all, seen); len(missing) > 0 {
		t.Errorf("%d ids missing from the browse after the kill: %v", len(missing), missing[:min(len(missing), 10)])
	}
	if missing := missingIDs(all, ids(check.drain("parked"))); len(missing) > 0 {
		t.Errorf("%d ids missing from the parking queue: %v", len(missing), missing[:min(len(missing), 10)])
	}
	return leader
}

// missingIDs are the ids of want not in got.
func missingIDs(want, got []string) []string {
	have := map[string]bool{}
	for _, id := range got {
		have[id] = true
	}
	var out []string
	for _, id := range want {
		if !have[id] {
			out = append(out, id)
		}
	}
	return out
}
