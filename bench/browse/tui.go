package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
)

// A TUI round runs the built binary the way a responder does, in a tmux
// pane of 120x40 opened straight on the queue (--queue), under
// /usr/bin/time -v, and reads the screen every few milliseconds: the time
// from the start of the process to the first group row on screen, to the
// end of the read (no "read so far" left in the title), how many messages
// the screen says it grouped, and the peak RSS once it has quit.
type tuiRun struct {
	first, all time.Duration
	grouped    int    // messages the title says were read
	title      string // the title line at the end, as shown
	rssKB      int64
	// The largest RssAnon and RssFile sampled in /proc while it read:
	// what the process itself holds, and the pages of files it maps (the
	// spill file's bbolt mmap), which the kernel takes back under pressure.
	anonKB, fileKB int64
}

// groupRow is a row of the groups table: a broker reason, a code, a count.
var groupRow = regexp.MustCompile(`^\S?\s*(published|rejected|expired|maxlen|delivery_limit)\s+\S+\s+[0-9][0-9,]*\s`)

// readCount is the title's count of messages read: "first 10,000 of
// 100,000 messages", "held 71,461 of 100,000 messages: …" or "all 100,000
// messages".
var readCount = regexp.MustCompile(`— (?:first |held |all )?([0-9][0-9,]*) (?:of [0-9,]+ )?messages?`)

const tuiPoll = 10 * time.Millisecond

func measureTUI(cfg broker.Config, queue string) (tuiRun, error) {
	dir, err := os.MkdirTemp("", "dlqt-bench-tui-")
	if err != nil {
		return tuiRun{}, err
	}
	defer os.RemoveAll(dir)
	var b [4]byte
	_, _ = rand.Read(b[:])
	session := "dlqt-bench-" + hex.EncodeToString(b[:])
	timeOut := filepath.Join(dir, "time.txt")
	dlqt, err := filepath.Abs("bin/dlqt")
	if err != nil {
		return tuiRun{}, err
	}
	argv := []string{"/usr/bin/time", "-v", "-o", timeOut, dlqt, "--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL,
		"--vhost", cfg.Vhost, "--queue", queue, "--journal", filepath.Join(dir, "journal.db")}
	shell := "NO_COLOR=1 XDG_CACHE_HOME=" + quote(dir) + " " + quoteAll(argv)
	start := time.Now()
	if out, err := exec.Command("tmux", "new", "-d", "-s", session, "-x", "120", "-y", "40", shell).CombinedOutput(); err != nil {
		return tuiRun{}, fmt.Errorf("tmux: %v: %s", err, out)
	}
	defer exec.Command("tmux", "kill-session", "-t", session).Run()
	var r tuiRun
	journal := filepath.Join(dir, "journal.db")
	pid := 0
	deadline := start.Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if pid == 0 {
			pid = pidOf(dlqt, journal)
		}
		if anon, file := rssSplit(pid); anon > 0 {
			r.anonKB, r.fileKB = max(r.anonKB, anon), max(r.fileKB, file)
		}
		screen, err := exec.Command("tmux", "capture-pane", "-p", "-t", session).Output()
		if err != nil {
			return r, fmt.Errorf("the TUI ended before its groups were read (tmux: %v)", err)
		}
		now := time.Since(start)
		lines := strings.Split(string(screen), "\n")
		if r.first == 0 && anyLine(lines, groupRow.MatchString) {
			r.first = now
		}
		if r.first != 0 && !strings.Contains(string(screen), "read so far") && !strings.Contains(string(screen), "reading ") {
			r.all, r.title = now, strings.TrimSpace(lines[0])
			break
		}
		time.Sleep(tuiPoll)
	}
	if r.all == 0 {
		return r, fmt.Errorf("the TUI did not finish reading %s in 10 minutes", queue)
	}
	if m := readCount.FindStringSubmatch(r.title); m != nil {
		r.grouped, _ = strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	}
	if out, err := exec.Command("tmux", "send-keys", "-t", session, "q").CombinedOutput(); err != nil {
		return r, fmt.Errorf("tmux send-keys: %v: %s", err, out)
	}
	for range 500 { // the process writes time.txt as it ends
		if rss := peakRSS(timeOut); rss > 0 {
			r.rssKB = rss
			return r, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r, fmt.Errorf("the TUI did not quit on q within 10 s")
}

// pidOf finds the dlqt process of this round by its journal path.
func pidOf(exe, journal string) int {
	out, err := exec.Command("pgrep", "-f", "-x", "^"+regexp.QuoteMeta(exe)+" .*"+regexp.QuoteMeta(journal)+".*").Output()
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.Fields(string(out) + " 0")[0])
	return pid
}

// rssSplit reads RssAnon and RssFile of pid, in KiB.
func rssSplit(pid int) (anon, file int64) {
	if pid == 0 {
		return 0, 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "RssAnon:":
			anon = n
		case "RssFile:":
			file = n
		}
	}
	return anon, file
}

func anyLine(lines []string, match func(string) bool) bool {
	for _, l := range lines {
		if match(l) {
			return true
		}
	}
	return false
}

func peakRSS(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Maximum resident set size (kbytes): "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func quoteAll(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}
