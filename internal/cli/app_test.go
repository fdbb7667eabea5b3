package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/views"
)

// isolate keeps the command line away from the user's config, journal and
// broker settings.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	for _, v := range []string{"DLQT_AMQP_URL", "DLQT_MGMT_URL", "DLQT_VHOST", "DLQT_JOURNAL", "DLQT_ACTOR", "DLQT_CONFIG", "DLQT_READ_ONLY", "DLQT_CONTEXT",
		"DLQT_TLS_CA_FILE", "DLQT_TLS_CERT_FILE", "DLQT_TLS_KEY_FILE", "DLQT_TLS_SERVER_NAME", "DLQT_TLS_INSECURE",
		"DLQT_USER", "DLQT_PASSWORD", "DLQT_PASSWORD_FILE", "DLQT_CONNECT_TIMEOUT", "DLQT_CLIPBOARD"} {
		t.Setenv(v, "")
	}
	return home
}

func run(t *testing.T, assets Assets, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, assets, &out, &errb)
	return out.String(), errb.String(), code
}

// closedPort is a local address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("broker down"), exitFailure},
		{usageError{errors.New("bad flag")}, exitUsage},
		{fmt.Errorf("wrapped: %w", usageError{errors.New("bad flag")}), exitUsage},
	}
	for _, tc := range tests {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestMainReportsUsageErrorsOnOneLineWithExit2(t *testing.T) {
	isolate(t)
	tests := [][]string{
		{"--no-such-flag"},
		{"--limit", "-1", "queues"},
		{"groups"},
		{"--demo", "--snapshot", "x.json", "queues"},
		{"discard", "park", "--reason", "dup"},
		{"replay", "park", "--rate", "0", "--group", "expired"},
		{"replay", "park", "--baseline", "-1s", "--group", "expired"},
		{"journal"},
		{"bogus"},            // an unknown command is a command line dlqt cannot understand
		{"journal", "bogus"}, // and so is an unknown subcommand
	}
	for _, args := range tests {
		stdout, stderr, code := run(t, Assets{}, args...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "dlqt: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("dlqt %v: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", args, code, stdout, stderr)
		}
	}
}

func TestMainRunsOnTheBundledDemoWithoutABroker(t *testing.T) {
	isolate(t)
	snap, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, Assets{DemoSnapshot: snap}, "--demo", "queues", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []QueueRow
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("not the JSON contract: %v\n%s", err, stdout)
	}
	parking := 0
	for _, r := range rows {
		if r.Parking {
			parking++
		}
	}
	if len(rows) == 0 || parking == 0 {
		t.Errorf("the demo lists %d queues, %d parking", len(rows), parking)
	}
}

func TestBrokerUnreachableReadsTheErrorChain(t *testing.T) {
	addr := closedPort(t)
	_, dialErr := broker.Dial(context.Background(), broker.Config{
		AMQPURL: "amqp://guest:guest@" + addr + "/", MgmtURL: "http://" + addr, Vhost: "/"})
	if dialErr == nil {
		t.Fatal("dialled a closed port")
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a dial to a closed port", dialErr, true},
		{"a refused syscall, wrapped", fmt.Errorf("management API: %w", syscall.ECONNREFUSED), true},
		{"any network operation error", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route to host")}, true},
		{"a text that only says so", errors.New("connection refused"), false},
		{"bad credentials", errors.New("management API: 401 bad credentials for user guest"), false},
		{"a missing vhost", fmt.Errorf("vhost: %w", triage.ErrNotFound), false},
	}
	for _, tc := range tests {
		if got := brokerUnreachable(tc.err); got != tc.want {
			t.Errorf("%s (%v): unreachable = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// openForChange opens the journal before it dials: a journal it cannot
// open stops the change before the broker is asked anything, and a broker
// it cannot reach leaves the journal closed again.
func TestOpenForChangeOpensTheJournalFirstAndClosesItOnFailure(t *testing.T) {
	addr := closedPort(t)
	a := &app{journalPath: filepath.Join(t.TempDir(), "journal.db"), actor: "tester@host", host: "host",
		amqpURL: "amqp://guest:guest@" + addr + "/", mgmtURL: "http://" + addr, vhost: "/"}

	_, _, _, err := a.openForChange(context.Background())
	if !brokerUnreachable(err) {
		t.Fatalf("err = %v, want the closed port's", err)
	}
	j, err := journal.Open(a.journalPath, 500*time.Millisecond)
	if err != nil {
		t.Fatalf("the journal was left open after the dial failed: %v", err)
	}
	defer j.Close()

	// Held by someone else: the journal's error, not the broker's.
	_, _, _, err = a.openForChange(context.Background())
	if err == nil || brokerUnreachable(err) {
		t.Fatalf("err = %v, want the journal's lock error before any dial", err)
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, fmt.Sprintf("c%d.yaml", time.Now().UnixNano()))
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("a missing default file is no config", func(t *testing.T) {
		c, err := loadFileConfig(filepath.Join(dir, "none.yaml"), false)
		if err != nil || c.Vhost != "" {
			t.Errorf("got %+v, %v", c, err)
		}
	})
	t.Run("a missing named file is an error", func(t *testing.T) {
		if _, err := loadFileConfig(filepath.Join(dir, "none.yaml"), true); err == nil {
			t.Error("no error")
		}
	})
	t.Run("health thresholds are the views type", func(t *testing.T) {
		c, err := loadFileConfig(write("health:\n  rate_warn: 2\n  age_crit: 90m\n  depth_crit: 50\n"), true)
		if err != nil {
			t.Fatal(err)
		}
		want := views.HealthThresholds{RateWarn: 2, AgeCrit: 90 * time.Minute, DepthCrit: 50}
		if c.Health != want {
			t.Errorf("health = %+v, want %+v", c.Health, want)
		}
	})
	t.Run("an unknown key is named, in any section", func(t *testing.T) {
		p := write("vhost: a\nhealth:\n  rate_wran: 2\n")
		_, err := loadFileConfig(p, true)
		if err == nil || !strings.Contains(err.Error(), `unknown key rate_wran`) || !strings.HasPrefix(err.Error(), "config "+p+": ") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a negative browse limit", func(t *testing.T) {
		if _, err := loadFileConfig(write("browse_limit: -3\n"), true); err == nil || !strings.Contains(err.Error(), "browse_limit must be positive, got -3") {
			t.Errorf("err = %v", err)
		}
	})
}

// An error that carries broker text (here a message id with an escape
// sequence, as a replay stopped by a failed-again copy names it) leaves on
// stderr with the sequence shown, not sent to the terminal; text already
// sanitised reads the same.
func TestTheErrorLineShowsBrokerEscapesAsText(t *testing.T) {
	err := fmt.Errorf("replay rp-1 stopped: 1 replayed message(s) failed again (m-1\x1b]0;owned\x07)")
	got := errorLine(err)
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `m-1\x1b]0;owned\x07`) {
		t.Errorf("error line %q", got)
	}
	if again := errorLine(errors.New(strings.TrimPrefix(got, "dlqt: "))); again != got {
		t.Errorf("sanitised twice: %q, once: %q", again, got)
	}
}
