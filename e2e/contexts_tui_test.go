package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// ':' opens the context switcher; choosing another context reconnects the
// TUI to its broker and vhost, and the status line says which it is now.
func TestTUIContextSwitcherReconnects(t *testing.T) {
	first, _ := scenarioVhost(t)
	second := first
	var b [6]byte
	rand.Read(b[:])
	second.Vhost = "dlqt-test-ctx-" + hex.EncodeToString(b[:])
	if err := brokertest.CreateVhost(second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { brokertest.DeleteVhost(second) })

	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yaml")
	ctxLine := func(name string, c broker.Config) string {
		return "  " + name + ": {amqp_url: \"" + c.AMQPURL + "\", mgmt_url: \"" + c.MgmtURL + "\", vhost: \"" + c.Vhost + "\"}\n"
	}
	text := "current_context: incident-a\ncontexts:\n" + ctxLine("incident-a", first) + ctxLine("incident-b", second)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(isolatedEnv(t), "DLQT_CONFIG="+conf, "DLQT_JOURNAL="+filepath.Join(dir, "journal.db"))

	s := startTerm(t, 200, 30, env)
	s.waitFor("context incident-a", first.Vhost)
	s.keys(":")
	if scr := s.waitFor("Switch to the broker context", "* incident-a", "incident-b", "vhost "+second.Vhost); strings.Contains(scr, "guest:guest") {
		t.Fatalf("the picker shows a URL with its password:\n%s", scr)
	}
	s.keys("Down", "Enter")
	u, err := url.Parse(second.AMQPURL) // the broker under test (make test-compat points elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	scr := s.waitFor("context incident-b │ " + u.Host + " vhost " + second.Vhost)
	if s.exited() {
		t.Fatalf("dlqt exited instead of switching:\n%s", scr)
	}
	s.waitGone("context incident-a")
}
