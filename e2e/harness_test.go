package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests of package e2e run the built dlqt binary: headless commands as
// subprocesses, the TUI inside tmux, asserting on what a person would see.

var dlqtBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dlqt-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dlqtBin = filepath.Join(dir, "dlqt")
	// The module root holds main.go; this package's directory is one below.
	build := exec.Command("go", "build", "-o", dlqtBin, "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building dlqt for the end-to-end tests:", err)
		os.Exit(1)
	}
	tmuxSocket = fmt.Sprintf("dlqt-e2e-%d", os.Getpid())
	// A private tmux server that outlives its sessions: on the shared default
	// one, killing the last session of one test let the server exit under
	// the next test's new-session ("server exited unexpectedly").
	if _, err := exec.LookPath("tmux"); err == nil {
		if out, err := tmuxCmd("start-server", ";", "set-option", "-g", "exit-empty", "off").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "starting tmux for the end-to-end tests: %v: %s\n", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if out, err := tmuxCmd("display-message", "-p", "#{socket_path}").Output(); err == nil {
		tmuxCmd("kill-server").Run()
		os.Remove(strings.TrimSpace(string(out))) // tmux leaves the socket file
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// tmuxSocket names this test run's own tmux server (tmux -L).
var tmuxSocket string

// tmuxCmd is a tmux command on this run's server.
func tmuxCmd(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-L", tmuxSocket}, args...)...)
}

// isolatedEnv keeps a test's dlqt away from the user's config, journal and
// broker settings.
func isolatedEnv(t *testing.T) []string {
	home := t.TempDir()
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"PATH=" + os.Getenv("PATH"),
		"TERM=xterm-256color",
		"USER=tester",
	}
	return env
}

type result struct {
	stdout, stderr string
	code           int
}

// runDlqt runs the binary headless and returns what it printed.
func runDlqt(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(dlqtBin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running dlqt %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// term is one dlqt running in a detached tmux session of a fixed size.
type term struct {
	t       *testing.T
	session string
}

// startTerm runs dlqt with args in a new tmux session of w x h cells.
func startTerm(t *testing.T, w, h int, env []string, args ...string) *term {
	t.Helper()
	return startTermIn(t, "", w, h, env, args...)
}

// startTermIn is startTerm with dir as dlqt's working directory ("" keeps
// tmux's).
func startTermIn(t *testing.T, dir string, w, h int, env []string, args ...string) *term {
	t.Helper()
	return startProgram(t, dir, w, h, env, dlqtBin, args...)
}

// startProgram runs program (dlqt, or ssh to a dlqt serve) with args in a
// new tmux session of w x h cells.
func startProgram(t *testing.T, dir string, w, h int, env []string, program string, args ...string) *term {
	t.Helper()
	if testing.Short() {
		t.Skip("drives dlqt in tmux; -short skips the end-to-end tests (make test runs them)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end tests need tmux (run .ci/prepare)")
	}
	var b [4]byte
	rand.Read(b[:])
	s := &term{t: t, session: "dlqt-e2e-" + hex.EncodeToString(b[:])}
	shellCmd := "exec env -i"
	for _, kv := range env {
		shellCmd += " " + shellQuote(kv)
	}
	shellCmd += " " + shellQuote(program)
	for _, a := range args {
		shellCmd += " " + shellQuote(a)
	}
	// remain-on-exit keeps the pane readable after dlqt quits or crashes.
	session := []string{"new-session", "-d", "-s", s.session, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h)}
	if dir != "" {
		session = append(session, "-c", dir)
	}
	s.tmux(append(session, shellCmd)...)
	s.tmux("set-option", "-t", s.session, "remain-on-exit", "on")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen at failure (%s):\n%s", s.paneState(), s.history())
		}
		tmuxCmd("kill-session", "-t", s.session).Run()
	})
	return s
}

func (s *term) tmux(args ...string) string {
	s.t.Helper()
	out, err := tmuxCmd(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// screen is what the pane shows now, as plain text.
func (s *term) screen() string {
	out, _ := tmuxCmd("capture-pane", "-p", "-t", s.session).CombinedOutput()
	return string(out)
}

// title is the pane title: an OSC title escape from a payload would change it.
func (s *term) title() string {
	return strings.TrimSpace(s.tmux("display-message", "-p", "-t", s.session, "#{pane_title}"))
}

// keys sends tmux key names ("Enter", "Escape", "Down", "q", "/").
func (s *term) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", s.session}, keys...)...)
}

// typeText sends literal text.
func (s *term) typeText(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", s.session, "-l", text)
}

// waitFor waits until the screen contains every one of texts and returns it.
func (s *term) waitFor(texts ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := s.screen()
		missing := ""
		for _, want := range texts {
			if !strings.Contains(scr, want) {
				missing = want
				break
			}
		}
		if missing == "" {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %q; it shows:\n%s", missing, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scrollTo pages down until text is on screen and returns the screen.
func (s *term) scrollTo(text string) string {
	s.t.Helper()
	for range 20 {
		if scr := s.screen(); strings.Contains(scr, text) {
			return scr
		}
		s.keys("PageDown")
		time.Sleep(150 * time.Millisecond)
	}
	return s.waitFor(text)
}

// waitGone waits until the screen no longer contains text.
func (s *term) waitGone(text string) string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		scr := s.screen()
		if !strings.Contains(scr, text) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen still shows %q:\n%s", text, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// paneState says whether the pane's process still runs, its pid, or how
// it ended, so that a blank or stalled screen at failure explains itself.
func (s *term) paneState() string {
	out, err := tmuxCmd("display-message", "-p", "-t", s.session,
		"pane_dead=#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal} pid=#{pane_pid} size=#{pane_width}x#{pane_height} in_mode=#{pane_in_mode}").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("tmux: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out))
}

// history is the pane's scrollback and screen, with the tmux error if the
// capture itself failed: what scrolled off the visible rows shows too.
func (s *term) history() string {
	out, err := tmuxCmd("capture-pane", "-p", "-J", "-S", "-", "-t", s.session).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v) %s", err, out)
	}
	return string(out)
}

// openUnder is how many files under dir the pane's process (dlqt: the
// pane runs it with exec) holds open, unlinked ones included.
func (s *term) openUnder(dir string) int {
	s.t.Helper()
	pid := strings.TrimSpace(s.tmux("display-message", "-p", "-t", s.session, "#{pane_pid}"))
	fds, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
	if err != nil {
		s.t.Fatalf("the open files of dlqt (pid %s): %v", pid, err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// exited reports whether dlqt's process has ended.
func (s *term) exited() bool {
	out, _ := tmuxCmd("display-message", "-p", "-t", s.session, "#{pane_dead}").CombinedOutput()
	return strings.TrimSpace(string(out)) == "1"
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
