package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// trace_url is read at the top level and per context (the context's wins,
// and a switch brings its own), and a URL that is not one is refused by name.
func TestTraceURLFromTheConfigAndItsContexts(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	resolve := func(text string, args ...string) (*app, *cobra.Command, error) {
		conf := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		a := &app{}
		cmd := &cobra.Command{Use: "dlqt", RunE: func(*cobra.Command, []string) error { return nil }}
		a.bindFlags(cmd)
		if err := cmd.ParseFlags(append([]string{"--config", conf}, args...)); err != nil {
			t.Fatal(err)
		}
		return a, cmd, a.resolve(cmd)
	}
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	text := "trace_url: https://tempo.example/trace/{trace_id}\ncontexts:\n" +
		"  prod: {vhost: p, trace_url: \"https://jaeger.prod.example/trace/{trace_id}\"}\n" +
		"  dev: {vhost: d}\n"
	a, cmd, err := resolve(text)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := a.traceURL.Link(id); got != "https://tempo.example/trace/"+id {
		t.Errorf("top level: %q", got)
	}
	if err := a.useContext(cmd, "prod"); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.traceURL.Link(id); got != "https://jaeger.prod.example/trace/"+id {
		t.Errorf("context prod: %q", got)
	}
	if err := a.useContext(cmd, "dev"); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.traceURL.Link(id); got != "https://tempo.example/trace/"+id {
		t.Errorf("context dev keeps the top level: %q", got)
	}
	if a, _, err := resolve(text, "--context", "prod"); err != nil || a.traceURL.String() != "https://jaeger.prod.example/trace/{trace_id}" {
		t.Errorf("--context prod: %q, %v", a.traceURL, err)
	}
	if _, _, err := resolve("trace_url: \"tempo.example/{trace_id}\"\n"); err == nil || !strings.Contains(err.Error(), "trace_url") {
		t.Errorf("a URL without a scheme: %v", err)
	}
}
