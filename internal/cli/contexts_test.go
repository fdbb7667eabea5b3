package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

// The TUI's switcher picks a context by name: its URLs and vhost win over
// what chose the first one, the first broker's queue and demo do not carry
// over, and read-only mode follows the context unless --read-only set it.
func TestUseContext(t *testing.T) {
	isolate(t)
	conf := filepath.Join(t.TempDir(), "config.yaml")
	text := "vhost: top\ncontexts:\n" +
		"  a: {amqp_url: \"amqp://u:p@a:5672/\", vhost: va, read_only: true}\n" +
		"  b: {mgmt_url: \"http://b:15672\"}\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	newApp := func(args ...string) (*app, *cobra.Command) {
		a := &app{}
		cmd := &cobra.Command{Use: "dlqt", RunE: func(*cobra.Command, []string) error { return nil }}
		a.bindFlags(cmd)
		if err := cmd.ParseFlags(append([]string{"--config", conf, "--amqp-url", "amqp://flag/", "--queue", "q1", "--demo"}, args...)); err != nil {
			t.Fatal(err)
		}
		if err := a.resolve(cmd); err != nil {
			t.Fatal(err)
		}
		return a, cmd
	}

	a, cmd := newApp()
	if err := a.useContext(cmd, "a"); err != nil {
		t.Fatal(err)
	}
	if a.context != "a" || a.amqpURL != "amqp://u:p@a:5672/" || a.vhost != "va" || !a.readOnly || a.queue != "" || a.demo {
		t.Errorf("after switching to a: %+v", a)
	}
	if err := a.useContext(cmd, "b"); err != nil {
		t.Fatal(err)
	}
	if a.amqpURL == "amqp://u:p@a:5672/" || a.mgmtURL != "http://b:15672" || a.vhost != "top" || a.readOnly {
		t.Errorf("after switching to b: amqp %q mgmt %q vhost %q read-only %v", a.amqpURL, a.mgmtURL, a.vhost, a.readOnly)
	}
	if err := a.useContext(cmd, "nope"); err == nil {
		t.Error("an unknown context switched")
	}

	a, cmd = newApp("--read-only")
	if err := a.useContext(cmd, "b"); err != nil || !a.readOnly {
		t.Errorf("--read-only did not stay on: %v, %v", a.readOnly, err)
	}
	if got := a.contextChoices(); len(got) != 2 || got[0].Name != "a" || got[0].Vhost != "va" || !got[0].ReadOnly {
		t.Errorf("choices = %+v", got)
	}
}
