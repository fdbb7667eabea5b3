// Package measure runs a command of the benchmarks under /usr/bin/time -v
// and keeps what the benchmarks report of it: wall time and peak RSS, and
// their medians over rounds.
package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Run is one measured run: its wall time, its peak RSS in KiB, and what it
// wrote to its standard output.
type Run struct {
	Wall   time.Duration
	RSSKB  int64
	Stdout string
}

// Command runs argv under /usr/bin/time -v: its wall time, and its peak RSS
// as time reports it. A command that fails is an error with the last lines
// of its standard error.
func Command(argv []string, env ...string) (Run, error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-v"}, argv...)...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := Run{Wall: time.Since(start), Stdout: stdout.String()}
	if err != nil {
		// the command's own last words, before time's report
		own, _, _ := strings.Cut(stderr.String(), "\tCommand being timed:")
		return r, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, LastLines(own, 5))
	}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Maximum resident set size (kbytes): "); ok {
			r.RSSKB, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if r.RSSKB == 0 {
		return r, fmt.Errorf("%s: no peak RSS in /usr/bin/time's output", argv[0])
	}
	return r, nil
}

// Median is the median wall time and the median peak RSS of rs, each on
// its own.
func Median(rs []Run) Run {
	w := make([]time.Duration, len(rs))
	m := make([]int64, len(rs))
	for i, r := range rs {
		w[i], m[i] = r.Wall, r.RSSKB
	}
	slices.Sort(w)
	slices.Sort(m)
	return Run{Wall: w[len(w)/2], RSSKB: m[len(m)/2]}
}

// MiB converts KiB to MiB.
func MiB(kb int64) float64 { return float64(kb) / 1024 }

// LastLines is the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// EnvInt is the positive integer in the environment variable name, or def.
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// EnvStr is the environment variable name, or def when it is empty.
func EnvStr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
