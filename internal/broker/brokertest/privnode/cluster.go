package privnode

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
)

// Cluster is a RabbitMQ cluster of private nodes sharing one Erlang cookie,
// stopped and removed when the test ends.
type Cluster struct {
	t     testing.TB
	Nodes []*Node
}

// StartCluster boots size private nodes at once, then joins every node to
// the first (stop_app, join_cluster, start_app). It fails the test when the
// cluster cannot form.
func StartCluster(t testing.TB, size int) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("a private RabbitMQ cluster takes a minute to boot")
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	cookie := strings.ToUpper(hex.EncodeToString(b[:]))
	c := &Cluster{t: t}
	for i := 0; i < portSlots && len(c.Nodes) < size; i++ {
		lock, ok := claim(i)
		if !ok {
			continue
		}
		n := newNode(t, t.TempDir(), i, lock)
		t.Cleanup(n.Stop)
		// One cookie for all: the nodes and rabbitmqctl must trust each other.
		cookieFile := filepath.Join(n.dir, "home", ".erlang.cookie")
		_ = os.Chmod(cookieFile, 0o600)
		write(t, cookieFile, cookie, 0o400)
		c.Nodes = append(c.Nodes, n)
	}
	if len(c.Nodes) < size {
		t.Fatalf("only %d free private-node slots in ports %d-%d, want %d", len(c.Nodes), amqpBase, amqpBase+portSlots-1, size)
	}
	errs := make([]error, size)
	var wg sync.WaitGroup
	for i, n := range c.Nodes {
		wg.Go(func() { errs[i] = n.boot() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("private RabbitMQ node %s: %v\n%s", c.Nodes[i].Name, err, c.Nodes[i].logTail())
		}
	}
	for _, n := range c.Nodes[1:] {
		n.Ctl("stop_app")
		n.Ctl("join_cluster", c.Nodes[0].Name)
		n.StartApp()
	}
	c.waitMembers(size)
	return c
}

// waitMembers waits until the first node sees want running nodes.
func (c *Cluster) waitMembers(want int) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var nodes []struct {
			Name    string `json:"name"`
			Running bool   `json:"running"`
		}
		running := 0
		if err := c.Nodes[0].mgmt(http.MethodGet, "nodes", &nodes); err == nil {
			for _, n := range nodes {
				if n.Running {
					running++
				}
			}
		}
		if running >= want {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster has %d running nodes, want %d", running, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Config is the cluster as dlqt's broker.Config: comma-separated lists of
// every node's AMQP and management URLs, starting with node first.
func (c *Cluster) Config(first int) broker.Config {
	var amqpURLs, mgmtURLs []string
	for k := range c.Nodes {
		n := c.Nodes[(first+k)%len(c.Nodes)]
		amqpURLs = append(amqpURLs, n.AMQPURL)
		mgmtURLs = append(mgmtURLs, n.MgmtURL)
	}
	return broker.Config{
		AMQPURL: strings.Join(amqpURLs, ","),
		MgmtURL: strings.Join(mgmtURLs, ","),
		Timeout: 5 * time.Second,
	}
}

// NewVhost creates a vhost on the cluster (guest gets full rights); the
// cluster goes away with the test, so nothing deletes it.
func (c *Cluster) NewVhost(prefix string) broker.Config {
	c.t.Helper()
	cfg := c.Config(0)
	cfg.Vhost = c.Nodes[0].NewVhost(prefix).Vhost
	return cfg
}

// KillNode sends SIGKILL to node i: no clean shutdown, no handover.
func (c *Cluster) KillNode(i int) { c.t.Helper(); c.Nodes[i].Kill() }

// Leader is the index of the node that leads quorum queue q, as the
// management API of a running node reports it.
func (c *Cluster) Leader(vhost, q string) int {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		for _, n := range c.Nodes {
			var info struct {
				Leader string `json:"leader"`
			}
			if last = n.mgmt(http.MethodGet, "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(q), &info); last != nil {
				continue
			}
			for i, m := range c.Nodes {
				if m.Name == info.Leader {
					return i
				}
			}
			last = fmt.Errorf("leader %q is no node of the cluster", info.Leader)
		}
		time.Sleep(250 * time.Millisecond)
	}
	c.t.Fatalf("no leader for queue %q: %v", q, last)
	return -1
}

// StartNode boots node i again on its own data after KillNode, and waits
// until it is back in the cluster.
func (c *Cluster) StartNode(i int) {
	c.t.Helper()
	n := c.Nodes[i]
	if err := n.boot(); err != nil {
		c.t.Fatalf("restart %s: %v\n%s", n.Name, err, n.logTail())
	}
	c.waitMembers(len(c.Nodes))
}

// Report is what node i lists with rabbitmqctl (e.g. "list_consumers" or
// "list_connections"), for a test's log; an error is reported in the text.
func (c *Cluster) Report(i int, args ...string) string {
	out, err := c.Nodes[i].ctlOutput(args...)
	if err != nil {
		return err.Error()
	}
	return out
}

// ConnectionNames are the connection_name client properties of the client
// connections the management API of node i lists (every node's).
func (c *Cluster) ConnectionNames(i int) ([]string, error) {
	var conns []struct {
		ClientProperties struct {
			Name string `json:"connection_name"`
		} `json:"client_properties"`
	}
	if err := c.Nodes[i].mgmt(http.MethodGet, "connections", &conns); err != nil {
		return nil, err
	}
	names := make([]string, len(conns))
	for k, conn := range conns {
		names[k] = conn.ClientProperties.Name
	}
	return names, nil
}
