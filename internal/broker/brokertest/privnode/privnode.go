// Package privnode starts a private RabbitMQ node for fault tests: its own
// node name, ports, data directory, config file, plugins file and Erlang
// cookie, all in a temporary directory. Tests restart it, close its
// connections, raise its memory alarm and kill it; the shared node at 5672
// is never touched.
package privnode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
)

// Port ranges reserved for private nodes: AMQP, management and Erlang
// distribution are base+i for the same i.
const (
	amqpBase  = 5720
	mgmtBase  = 15720
	distBase  = 25720
	portSlots = 40
	bootWait  = 90 * time.Second
)

// Node is one private RabbitMQ node, stopped and removed when the test ends.
type Node struct {
	t       testing.TB
	Name    string // rabbitmqctl -n
	AMQPURL string // amqp://guest:guest@127.0.0.1:<port>/
	MgmtURL string // http://127.0.0.1:<port>
	dir     string
	env     []string
	// root is the chroot of another RabbitMQ (scripts/rabbitmq-node's
	// 4.x) the node runs in, "" for the machine's own; dir is then inside
	// it, and env and the config name paths as the node sees them.
	root   string
	lock   *os.File // held while the node owns its ports
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start boots a private node and waits until its management API and AMQP
// listener answer. It fails the test when RabbitMQ cannot start.
func Start(t testing.TB) *Node {
	t.Helper()
	if testing.Short() {
		t.Skip("a private RabbitMQ node takes seconds to boot")
	}
	if os.Getenv("DLQT_TEST_PRIVATE_NODES") == "off" {
		// make test-compat's 4.x columns: a private node is the machine's
		// RabbitMQ (3.10), which make test already ran these tests on.
		t.Skip("private nodes are off (DLQT_TEST_PRIVATE_NODES=off): they run the machine's RabbitMQ, tested by make test")
	}
	dir := t.TempDir()
	for i := range portSlots {
		lock, ok := claim(i)
		if !ok {
			continue
		}
		n := newNode(t, dir, i, lock)
		t.Cleanup(n.Stop)
		if err := n.boot(); err != nil {
			t.Fatalf("private RabbitMQ node %s: %v\n%s", n.Name, err, n.logTail())
		}
		return n
	}
	t.Fatalf("no free private-node slot in ports %d-%d", amqpBase, amqpBase+portSlots-1)
	return nil
}

// claim takes slot i for this process: a lock file (other test binaries
// run at the same time) and three ports nobody listens on.
func claim(i int) (*os.File, bool) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("dlqt-privnode-%d.lock", amqpBase+i))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	for _, p := range []int{amqpBase + i, mgmtBase + i, distBase + i} {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			f.Close()
			return nil, false
		}
		l.Close()
	}
	return f, true
}

func newNode(t testing.TB, dir string, i int, lock *os.File) *Node {
	t.Helper()
	amqpPort, mgmtPort := amqpBase+i, mgmtBase+i
	n := &Node{
		t:       t,
		Name:    fmt.Sprintf("dlqt-priv-%d@localhost", amqpPort),
		AMQPURL: fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", amqpPort),
		MgmtURL: fmt.Sprintf("http://127.0.0.1:%d", mgmtPort),
		dir:     dir,
		lock:    lock,
	}
	home := filepath.Join(dir, "home")
	for _, d := range []string{home, filepath.Join(dir, "mnesia"), filepath.Join(dir, "log")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A cookie of its own: rabbitmqctl finds it through the same HOME.
	var b [16]byte
	_, _ = rand.Read(b[:])
	write(t, filepath.Join(home, ".erlang.cookie"), strings.ToUpper(hex.EncodeToString(b[:])), 0o400)
	// The machine's own config pins the default listener: pass ours.
	write(t, filepath.Join(dir, "rabbitmq.conf"), fmt.Sprintf(
		"listeners.tcp.default = %d\nmanagement.tcp.port = %d\nmanagement.tcp.ip = 127.0.0.1\n"+
			"loopback_users = none\ncollect_statistics_interval = 500\n", amqpPort, mgmtPort), 0o600)
	write(t, filepath.Join(dir, "enabled_plugins"), "[rabbitmq_management].\n", 0o600)
	write(t, filepath.Join(dir, "rabbitmq-env.conf"), "", 0o600)
	n.env = append(os.Environ(), n.ownEnv(home)...)
	return n
}

// ownEnv is what the node's scripts must be told: where everything is, and
// its name and ports.
func (n *Node) ownEnv(home string) []string {
	dir := n.dir
	amqpPort := amqpBase + n.slot()
	distPort := distBase + n.slot()
	return []string{
		"HOME=" + home,
		"RABBITMQ_NODENAME=" + n.Name,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT=" + strconv.Itoa(amqpPort),
		"RABBITMQ_DIST_PORT=" + strconv.Itoa(distPort),
		"RABBITMQ_CONFIG_FILE=" + filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_CONF_ENV_FILE=" + filepath.Join(dir, "rabbitmq-env.conf"),
		"RABBITMQ_ENABLED_PLUGINS_FILE=" + filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_MNESIA_BASE=" + filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE=" + filepath.Join(dir, "log"),
		"ERL_EPMD_ADDRESS=127.0.0.1",
	}
}

// slot is the node's port slot, from its AMQP URL's port.
func (n *Node) slot() int {
	u, _ := url.Parse(n.AMQPURL)
	p, _ := strconv.Atoi(u.Port())
	return p - amqpBase
}

// inChroot moves a node made by newNode (its dir inside root) into root:
// its scripts run there with a clean environment naming paths as seen
// from inside. The host's proc, dev and sys must be mounted in root
// (scripts/rabbitmq-node up mounts them).
func (n *Node) inChroot(root string) error {
	if !fileExists(filepath.Join(root, "proc", "self")) {
		return fmt.Errorf("%s has no /proc mounted: run scripts/rabbitmq-node up for its version first", root)
	}
	n.root = root
	n.env = append([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"},
		n.ownEnv(filepath.Join(n.dir, "home"))...)
	for i, kv := range n.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(v, n.dir) {
			n.env[i] = k + "=" + n.inner(v)
		}
	}
	return nil
}

// inner is path as the node sees it (the same unless it runs in a chroot).
func (n *Node) inner(path string) string {
	if n.root == "" {
		return path
	}
	return "/" + strings.TrimPrefix(strings.TrimPrefix(path, n.root), "/")
}

// command runs one of RabbitMQ's scripts for this node: the machine's
// (see tool), or the chroot's.
func (n *Node) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if n.root == "" {
		cmd = exec.CommandContext(ctx, tool(name), args...)
	} else {
		cmd = exec.CommandContext(ctx, "chroot", append([]string{n.root, "/usr/lib/rabbitmq/bin/" + name}, args...)...)
	}
	cmd.Env = n.env
	cmd.Dir = n.dir
	return cmd
}

func write(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// tool finds a RabbitMQ script: the packaged one directly (the /usr/sbin
// wrapper switches to the rabbitmq user, who cannot read our directory),
// else the one on PATH.
func tool(name string) string {
	if p := filepath.Join("/usr/lib/rabbitmq/bin", name); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// boot starts the server process and waits until it serves.
func (n *Node) boot() error {
	out, err := os.OpenFile(filepath.Join(n.dir, "server.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := n.command(context.Background(), "rabbitmq-server")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Kill takes the whole group
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start rabbitmq-server: %w", err)
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(n.exited) }()
	return n.waitServing()
}

// waitServing waits until the management API and the AMQP port answer.
func (n *Node) waitServing() error {
	deadline := time.Now().Add(bootWait)
	for time.Now().Before(deadline) {
		select {
		case <-n.exited:
			return errors.New("rabbitmq-server exited while starting")
		default:
		}
		if n.mgmt(http.MethodGet, "overview", nil) == nil && n.amqpAnswers() {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("not serving after %s", bootWait)
}

func (n *Node) amqpAnswers() bool {
	u, _ := url.Parse(n.AMQPURL)
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// For is the node with its helpers failing t instead of the test that
// started it: a subtest's t.Fatal through the parent's t ends the subtest
// with a Goexit panic ("subtest may have called FailNow on a parent test")
// instead of its failure. The node still stops with the test that started it.
func (n *Node) For(t testing.TB) *Node {
	sub := *n
	sub.t = t
	return &sub
}

// Config is the node as dlqt's broker.Config, without a vhost.
func (n *Node) Config() broker.Config {
	return broker.Config{AMQPURL: n.AMQPURL, MgmtURL: n.MgmtURL, Timeout: 5 * time.Second}
}

// NewVhost creates a vhost on the node (guest gets full rights); the node
// goes away with the test, so nothing deletes it.
func (n *Node) NewVhost(prefix string) broker.Config {
	n.t.Helper()
	c := n.Config()
	var b [4]byte
	_, _ = rand.Read(b[:])
	c.Vhost = "dlqt-fault-" + prefix + "-" + hex.EncodeToString(b[:])
	if err := broker.CreateVhost(c); err != nil {
		n.t.Fatal(err)
	}
	return c
}

// ctl runs rabbitmqctl against this node.
func (n *Node) ctl(args ...string) error {
	_, err := n.ctlOutput(args...)
	return err
}

// ctlOutput runs rabbitmqctl against this node and returns what it printed.
func (n *Node) ctlOutput(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := n.command(ctx, "rabbitmqctl", append([]string{"-n", n.Name}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("rabbitmqctl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Ctl runs rabbitmqctl against this node and fails the test on error.
func (n *Node) Ctl(args ...string) {
	n.t.Helper()
	if err := n.ctl(args...); err != nil {
		n.t.Fatal(err)
	}
}

// StopApp stops the RabbitMQ application (the Erlang node stays up): every
// connection drops and the listeners close.
func (n *Node) StopApp() { n.t.Helper(); n.Ctl("stop_app") }

// StartApp starts the application again and waits until it serves.
func (n *Node) StartApp() {
	n.t.Helper()
	n.Ctl("start_app")
	if err := n.waitServing(); err != nil {
		n.t.Fatal(err)
	}
}

// Restart is stop_app then start_app.
func (n *Node) Restart() { n.t.Helper(); n.StopApp(); n.StartApp() }

// RestartFull stops the whole node and boots it again on the same data.
func (n *Node) RestartFull() {
	n.t.Helper()
	n.Ctl("stop")
	n.waitExited(30 * time.Second)
	if err := n.boot(); err != nil {
		n.t.Fatalf("restart %s: %v\n%s", n.Name, err, n.logTail())
	}
}

// Kill sends SIGKILL to the node's process group: no clean shutdown.
func (n *Node) Kill() {
	n.t.Helper()
	if n.cmd == nil {
		return
	}
	_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	n.waitExited(10 * time.Second)
}

// KillAndBoot kills the node with SIGKILL, as a crash would, and boots it
// again on the same data.
func (n *Node) KillAndBoot() {
	n.t.Helper()
	n.Kill()
	if err := n.boot(); err != nil {
		n.t.Fatalf("boot %s after the kill: %v\n%s", n.Name, err, n.logTail())
	}
}

func (n *Node) waitExited(d time.Duration) {
	if n.exited == nil {
		return
	}
	select {
	case <-n.exited:
	case <-time.After(d):
		_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		<-n.exited
	}
}

// Stop stops the node (registered with t.Cleanup by Start).
func (n *Node) Stop() {
	if n.cmd != nil {
		select {
		case <-n.exited:
		default:
			if err := n.ctl("stop"); err != nil {
				n.t.Log(err)
			}
			n.waitExited(20 * time.Second)
		}
	}
	if n.lock != nil {
		n.lock.Close()
		n.lock = nil
	}
}

// CloseAllConnections closes every client connection through the
// management API, as an operator would; it returns how many it closed.
func (n *Node) CloseAllConnections() int {
	n.t.Helper()
	var conns []struct {
		Name string `json:"name"`
	}
	if err := n.mgmt(http.MethodGet, "connections", &conns); err != nil {
		n.t.Fatal(err)
	}
	for _, c := range conns {
		if err := n.mgmt(http.MethodDelete, "connections/"+url.PathEscape(c.Name), nil); err != nil {
			n.t.Fatal(err)
		}
		n.t.Logf("closed connection %s", c.Name)
	}
	return len(conns)
}

// CloseConnectionsNamed closes, through the management API, only the
// client connections whose connection_name is name (as a proxy's idle cut
// or an admin would close one), once the node lists one (it learns of new
// connections within a statistics interval); it waits until the node no
// longer lists them and returns how many it closed.
func (n *Node) CloseConnectionsNamed(name string) int {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var named []string
	for len(named) == 0 && time.Now().Before(deadline) {
		for _, c := range n.connections() {
			if c.ClientProperties["connection_name"] == name {
				named = append(named, c.Name)
			}
		}
		if len(named) == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, c := range named {
		if err := n.mgmt(http.MethodDelete, "connections/"+url.PathEscape(c), nil); err != nil {
			n.t.Fatal(err)
		}
	}
	closed := slices.Clone(named)
	for left := named; len(left) > 0; {
		if time.Now().After(deadline) {
			n.t.Fatalf("connections %v are still listed after their close", left)
		}
		time.Sleep(100 * time.Millisecond)
		listed := map[string]bool{}
		for _, c := range n.connections() {
			listed[c.Name] = true
		}
		left = slices.DeleteFunc(left, func(c string) bool { return !listed[c] })
	}
	return len(closed)
}

type connection struct {
	Name             string         `json:"name"`
	ClientProperties map[string]any `json:"client_properties"`
}

// Connection is a client connection as the management API lists it: the
// node's name for it and the connection_name its client gave.
type Connection struct {
	Name       string
	ClientName string
}

// ListConnections lists the client connections through the management API
// (it learns of new ones within a statistics interval). It returns its
// error rather than fail the node's test, so that a subtest reports it as
// its own failure.
func (n *Node) ListConnections() ([]Connection, error) {
	var conns []connection
	if err := n.mgmt(http.MethodGet, "connections", &conns); err != nil {
		return nil, err
	}
	listed := make([]Connection, len(conns))
	for i, c := range conns {
		name, _ := c.ClientProperties["connection_name"].(string)
		listed[i] = Connection{Name: c.Name, ClientName: name}
	}
	return listed, nil
}

// CloseConnection closes the connection the node calls name through the
// management API, as an operator would; like ListConnections it returns
// its error.
func (n *Node) CloseConnection(name string) error {
	return n.mgmt(http.MethodDelete, "connections/"+url.PathEscape(name), nil)
}

func (n *Node) connections() []connection {
	n.t.Helper()
	var conns []connection
	if err := n.mgmt(http.MethodGet, "connections", &conns); err != nil {
		n.t.Fatal(err)
	}
	return conns
}

// LimitConnections sets vhost's max-connections limit: the connections
// open stay, new ones beyond it are refused; negative lifts it (as
// RabbitMQ reads it).
func (n *Node) LimitConnections(vhost string, max int) {
	n.t.Helper()
	n.Ctl("set_vhost_limits", "-p", vhost, fmt.Sprintf(`{"max-connections": %d}`, max))
}

// WaitConnections waits until the management API lists at least want
// client connections (it learns of new ones within a statistics interval).
func (n *Node) WaitConnections(want int) {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var conns []json.RawMessage
		if err := n.mgmt(http.MethodGet, "connections", &conns); err != nil {
			n.t.Fatal(err)
		}
		if len(conns) >= want {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("%d connections listed, want %d", len(conns), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SetMemoryAlarm sets the memory high watermark so low that the alarm
// goes off and stays on, and waits until the node reports it.
func (n *Node) SetMemoryAlarm() {
	n.t.Helper()
	n.Ctl("set_vm_memory_high_watermark", "0.0000001")
	n.waitAlarm(true)
}

// ClearMemoryAlarm puts the watermark back to the default.
func (n *Node) ClearMemoryAlarm() {
	n.t.Helper()
	n.Ctl("set_vm_memory_high_watermark", "0.4")
	n.waitAlarm(false)
}

func (n *Node) waitAlarm(want bool) {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var nodes []struct {
			MemAlarm bool `json:"mem_alarm"`
		}
		if err := n.mgmt(http.MethodGet, "nodes", &nodes); err != nil {
			n.t.Fatal(err)
		}
		if len(nodes) == 1 && nodes[0].MemAlarm == want {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("memory alarm never became %v", want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mgmt calls the node's management API as guest; out may be nil.
func (n *Node) mgmt(method, path string, out any) error {
	req, err := http.NewRequest(method, n.MgmtURL+"/api/"+path, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth("guest", "guest")
	c := http.Client{Timeout: 5 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s", method, req.URL, res.Status)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(res.Body).Decode(out)
}

// logTail is the end of the server's output, for a failed boot.
func (n *Node) logTail() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "server.out"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
