package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/triage"
)

// secretSnapshot writes a snapshot of one queue holding one JSON message
// with a secret of every default kind plus the targets of the configured
// rules, and returns its path.
func secretSnapshot(t *testing.T, body string, headers triage.Headers) string {
	t.Helper()
	now := time.Now().UTC()
	msg := triage.Message{Queue: "park", Body: []byte(body), Headers: headers,
		Properties: triage.Properties{MessageID: "s-1", ContentType: "application/json"}}
	snap := filepath.Join(t.TempDir(), "secrets.snapshot.json")
	err := broker.WriteSnapshotFile(snap, broker.SnapshotFile{Format: broker.SnapshotFormat, Source: "test", TakenAt: now,
		Topology: triage.Topology{Vhost: "secrets", Queues: []triage.Queue{{Name: "park", Type: triage.QueueClassic, Messages: 1}}},
		Batches:  []triage.Batch{{Vhost: "secrets", Queue: "park", Depth: 1, Limit: 100, TakenAt: now, Messages: []triage.Message{msg}}}})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// oneMessage runs `dlqt messages park --json` and decodes its only line.
func oneMessage(t *testing.T, env []string, args ...string) cli.MessageRow {
	t.Helper()
	r := runDlqt(t, env, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	var m cli.MessageRow
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &m) != nil || sc.Scan() {
		t.Fatalf("want one JSON line, got:\n%s", r.stdout)
	}
	return m
}

// defaultSecrets are one secret of each default detector, as a JSON field,
// with the text that must not survive.
var defaultSecrets = []struct{ field, hidden string }{
	{`"password":"hunter2-hunter2"`, "hunter2"},
	{`"x-api-key":"k-1234567890abcdef"`, "k-1234567890abcdef"},
	{`"refresh_token":"r-1234567890abcdef"`, "r-1234567890abcdef"},
	{`"ssn":"078-05-1120"`, "078-05-1120"},
	{`"pk":"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA75\n-----END RSA PRIVATE KEY-----"`, "MIIEpAIBAAKCAQEA75"},
	{`"jwt_note":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"`, "eyJzdWIiOiIxMjM0NTY3ODkwIn0"},
	{`"bearer_note":"Bearer abcdefghijklmnop1234"`, "abcdefghijklmnop1234"},
	{`"basic_note":"Basic dXNlcjpwYXNzd29yZA=="`, "dXNlcjpwYXNzd29yZA"},
	{`"dsn":"amqp://app:s3cr3t-pass@rabbit:5672/"`, "s3cr3t-pass"},
	{`"aws":"AKIAIOSFODNN7EXAMPLE"`, "AKIAIOSFODNN7EXAMPLE"},
	{`"gkey":"AIzaSyA1234567890abcdefghijklmnopqrstuv"`, "AIzaSyA1234567890abcdefghijklmnopqrstuv"},
	{`"gh":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"`, "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
	{`"slack":"xoxb-1234567890-abcdefghij"`, "xoxb-1234567890-abcdefghij"},
	{`"stripe":"sk_live_abcdefghijklmnop1234"`, "sk_live_abcdefghijklmnop1234"},
	{`"memo":"card 4111 1111 1111 1111 on file"`, "4111 1111 1111 1111"},
	{`"contact":"jane.doe@example.com"`, "jane.doe@"},
}

// A config with one rule of each kind (key, JSON path, value pattern), run
// once per mask style through `dlqt messages --json`: the rules mask their
// targets in that style, every default detector still masks, and what no
// rule names stays readable.
func TestConfiguredRedactionThroughMessagesJSON(t *testing.T) {
	fields := []string{`"customer":{"national_id":"880101-1234567","tax_id":"VN-0312345678","tenant":"acme"}`,
		`"note":"see TCK-123456"`, `"tax_id":"top-level-visible"`}
	for _, s := range defaultSecrets {
		fields = append(fields, s.field)
	}
	snap := secretSnapshot(t, "{"+strings.Join(fields, ",")+"}",
		triage.Headers{"National-Id": "880101-7654321", "x-ticket": "TCK-999999", "x-api-key": "hdr-secret-1234567890"})
	styles := map[string]*regexp.Regexp{
		"full":    regexp.MustCompile(`^\[REDACTED(:internal-ticket)?\]$`),
		"partial": regexp.MustCompile(`^\[REDACTED(:internal-ticket)? \.\.\.[0-9]{4}\]$`),
		"hash":    regexp.MustCompile(`^\[REDACTED(:internal-ticket)? sha256:[0-9a-f]{8}\]$`),
	}
	for mask, want := range styles {
		t.Run(mask, func(t *testing.T) {
			cfg := writeConfig(t, `redaction:
  keys:     [{name: national_id, match: exact, mask: `+mask+`}]
  paths:    [{path: customer.tax_id, mask: `+mask+`}]
  patterns: [{name: internal-ticket, regex: 'TCK-[0-9]{6}', mask: `+mask+`}]
`)
			env := append(isolatedEnv(t), "DLQT_CONFIG="+cfg)
			m := oneMessage(t, env, "--snapshot", snap, "messages", "park", "--json")
			var doc struct {
				Customer map[string]string `json:"customer"`
				Note     string            `json:"note"`
				TaxID    string            `json:"tax_id"`
			}
			if err := json.Unmarshal([]byte(m.Payload), &doc); err != nil {
				t.Fatalf("payload is not JSON: %v\n%s", err, m.Payload)
			}
			for what, got := range map[string]string{
				"key national_id in the payload": doc.Customer["national_id"],
				"key National-Id in a header":    headerText(m.Headers["National-Id"]),
				"path customer.tax_id":           doc.Customer["tax_id"],
				"pattern in the payload":         strings.TrimPrefix(doc.Note, "see "),
				"pattern in a header":            headerText(m.Headers["x-ticket"]),
			} {
				if !want.MatchString(got) {
					t.Errorf("%s: %q, want a %s mask", what, got, mask)
				}
			}
			if doc.TaxID != "top-level-visible" || doc.Customer["tenant"] != "acme" {
				t.Errorf("a rule masked beyond what it names: %s", m.Payload)
			}
			all := m.Payload + " " + headerText(m.Headers["x-api-key"])
			for _, s := range defaultSecrets {
				if strings.Contains(all, s.hidden) {
					t.Errorf("default detector off: %q shows in %s", s.hidden, all)
				}
			}
			if strings.Contains(all, "hdr-secret") {
				t.Error("the x-api-key header shows")
			}
			if m.Redactions < len(defaultSecrets)+5 {
				t.Errorf("%d redactions, want at least %d", m.Redactions, len(defaultSecrets)+5)
			}
		})
	}
	t.Run("without a config only the defaults mask", func(t *testing.T) {
		m := oneMessage(t, isolatedEnv(t), "--snapshot", snap, "messages", "park", "--json")
		if !strings.Contains(m.Payload, "VN-0312345678") || !strings.Contains(m.Payload, "TCK-123456") {
			t.Errorf("a rule applied with no config: %s", m.Payload)
		}
		for _, s := range defaultSecrets {
			if strings.Contains(m.Payload, s.hidden) {
				t.Errorf("default detector off: %q shows", s.hidden)
			}
		}
	})
}

func headerText(v any) string {
	s, _ := v.(string)
	return s
}

// A redaction rule that cannot be read stops dlqt at startup, naming it.
func TestBadRedactionConfigIsOneLineNamingTheRule(t *testing.T) {
	snap := secretSnapshot(t, `{"a":1}`, nil)
	for cfg, words := range map[string][]string{
		"redaction:\n  patterns: [{name: ticket, regex: 'TCK-[0-9'}]\n":   {"redaction.patterns[0]", `"ticket"`, "regex"},
		"redaction:\n  patterns: [{name: anything, regex: 'x*'}]\n":       {"redaction.patterns[0]", "empty string"},
		"redaction:\n  patterns: [{regex: 'x+'}]\n":                       {"redaction.patterns[0]", "no name"},
		"redaction:\n  keys: [{name: national_id, mask: blur}]\n":         {"redaction.keys[0] (national_id)", `"blur"`, "full, partial or hash"},
		"redaction:\n  keys: [{name: pin, match: prefix}]\n":              {"redaction.keys[0] (pin)", `"prefix"`},
		"redaction:\n  keys: [{mask: full}]\n":                            {"redaction.keys[0]", "name is required"},
		"redaction:\n  paths: [{path: 'customer..tax_id', mask: hash}]\n": {"redaction.paths[0]", "customer..tax_id"},
		"redaction:\n  paths: [{path: x, mask: hashed}]\n":                {"redaction.paths[0] (x)", `"hashed"`},
		"redaction:\n  kyes: []\n":                                        {"unknown key", "kyes"},
		"redaction:\n  keys: [{name: a, masks: full}]\n":                  {"unknown key", "masks"},
		"filters:\n  tenant_path: 'a[x]'\n":                               {"filters.tenant_path", "a[x]"},
		"filters:\n  tenant: a\n":                                         {"unknown key", "tenant"},
	} {
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, cfg))
		r := runDlqt(t, env, "--snapshot", snap, "messages", "park", "--json")
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q", cfg, r.code, r.stdout)
		}
		assertOneLine(t, r.stderr, words...)
		if strings.Contains(r.stderr, "main.") || strings.Contains(r.stderr, "struct {") {
			t.Errorf("%q: a Go type name reached the user: %s", cfg, r.stderr)
		}
	}
}
