package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// servePeer is a person with a generated key pair in a dlqt serve test.
type servePeer struct {
	name, role, key, fingerprint string
}

// serveBed is a running `dlqt serve` on a loopback port, with a generated
// host key and users, reached with the real OpenSSH client.
type serveBed struct {
	t     *testing.T
	addr  string
	port  string
	dir   string
	log   string
	users string
	cmd   *exec.Cmd
	peers map[string]servePeer
	env   []string
	fds   int // the server's open-files limit; 0 leaves it
}

// newPeer generates name's key with ssh-keygen.
func newPeer(t *testing.T, dir, name, role string) servePeer {
	t.Helper()
	key := filepath.Join(dir, "id_"+name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name+"@laptop", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pk, _, _, _, err := gossh.ParseAuthorizedKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return servePeer{name: name, role: role, key: key, fingerprint: gossh.FingerprintSHA256(pk)}
}

// startServe runs dlqt serve with env for alice (operator), bob (viewer)
// and carol (operator); eve has a key the users file does not list.
func startServe(t *testing.T, env []string, extra ...string) *serveBed {
	t.Helper()
	b := newServeBed(t, env)
	b.start(b.serveArgs(extra...))
	return b
}

// serveArgs are dlqt serve's flags for b's address, users and host key.
func (b *serveBed) serveArgs(extra ...string) []string {
	return append([]string{"serve", "--listen", b.addr, "--users", b.users, "--host-key", filepath.Join(b.dir, "host_key")}, extra...)
}

// newServeBed makes the keys, users file and address of a dlqt serve.
func newServeBed(t *testing.T, env []string) *serveBed {
	t.Helper()
	if testing.Short() {
		t.Skip("runs dlqt serve and ssh; -short skips the end-to-end tests")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("the dlqt serve tests need ssh and ssh-keygen (run .ci/prepare)")
	}
	dir := t.TempDir()
	b := &serveBed{t: t, dir: dir, env: env, peers: map[string]servePeer{}, log: filepath.Join(dir, "serve.log")}
	var users strings.Builder
	users.WriteString("users:\n")
	for _, p := range [][2]string{{"alice", "operator"}, {"bob", "viewer"}, {"carol", "operator"}, {"eve", ""}} {
		peer := newPeer(t, dir, p[0], p[1])
		b.peers[p[0]] = peer
		if p[1] == "" {
			continue
		}
		pub, _ := os.ReadFile(peer.key + ".pub")
		fmt.Fprintf(&users, "  - name: %s\n    role: %s\n    keys: [%q]\n", p[0], p[1], strings.TrimSpace(string(pub)))
	}
	usersPath := filepath.Join(dir, "users.yaml")
	b.users = usersPath
	if err := os.WriteFile(usersPath, []byte(users.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b.addr = freeLoopback(t)
	_, b.port, _ = net.SplitHostPort(b.addr)
	return b
}

func (b *serveBed) start(args []string) {
	b.t.Helper()
	logf, err := os.Create(b.log)
	if err != nil {
		b.t.Fatal(err)
	}
	b.cmd = exec.Command(dlqtBin, args...)
	if b.fds > 0 { // as a host with a low open-files limit runs it
		b.cmd = exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, b.fds), dlqtBin}, args...)...)
	}
	b.cmd.Env = b.env
	b.cmd.Stdout, b.cmd.Stderr = logf, logf
	if err := b.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		b.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			b.cmd.Process.Kill()
			b.t.Error("dlqt serve did not end within 30 s of SIGTERM")
		}
		logf.Close()
		if b.t.Failed() {
			out, _ := os.ReadFile(b.log)
			b.t.Logf("dlqt serve said:\n%s", out)
		}
	})
	b.waitLog("listening on " + b.addr)
}

// waitLog waits until the server's log holds text and returns it.
func (b *serveBed) waitLog(text string) string {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _ := os.ReadFile(b.log)
		if strings.Contains(string(out), text) {
			return string(out)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("dlqt serve never said %q; it said:\n%s", text, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// sshArgs are the ssh options of a test: this key only, no config, no
// known hosts, no questions.
func (b *serveBed) sshArgs(who string, tty bool) []string {
	args := []string{"-F", "/dev/null", "-p", b.port, "-i", b.peers[who].key, "-o", "IdentitiesOnly=yes",
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
		"-o", "LogLevel=ERROR"}
	if tty {
		args = append(args, "-tt")
	}
	return append(args, "root@127.0.0.1") // the login name is ignored: the key names the user
}

// ssh runs a headless dlqt command over ssh as who.
func (b *serveBed) ssh(who string, command ...string) result {
	b.t.Helper()
	cmd := exec.Command("ssh", append(append(b.sshArgs(who, false), "--"), command...)...)
	cmd.Env = b.env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatalf("ssh %v: %v", command, err)
	}
	return result{out.String(), errb.String(), code}
}

// tui opens who's TUI over ssh -tt in tmux.
func (b *serveBed) tui(who string, w, h int) *term {
	b.t.Helper()
	return startProgram(b.t, "", w, h, b.env, "ssh", b.sshArgs(who, true)...)
}

// lines reads the server's log lines.
func (b *serveBed) lines() []string {
	f, err := os.Open(b.log)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
