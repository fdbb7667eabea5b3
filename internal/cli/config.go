package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/views"
)

// fileConfig is the optional YAML config file. Unknown keys are an error,
// so a typo never silently falls back to a default.
type fileConfig struct {
	AMQPURL         string   `yaml:"amqp_url"`
	MgmtURL         string   `yaml:"mgmt_url"`
	Vhost           string   `yaml:"vhost"`
	Actor           string   `yaml:"actor"`
	Journal         string   `yaml:"journal"`
	BrowseLimit     int      `yaml:"browse_limit"`
	ParkingPatterns []string `yaml:"parking_patterns"`
	// TraceURL links a message's trace id to the tracing UI, e.g.
	// https://tempo.example/trace/{trace_id}; a context may set its own.
	TraceURL string `yaml:"trace_url"`
	// AppFrames are globs over frame names (com.acme.*, Billing.*) of the
	// packages that are the operator's own: a failure's fingerprint says
	// where in them it was thrown, over the built-in framework list.
	AppFrames []string `yaml:"app_frames"`
	// Keymap overrides key bindings by action name, like keymap.yaml.
	Keymap yaml.Node `yaml:"keymap"`
	// Replay.Allow lists the destinations (globs over EXCHANGE:ROUTING_KEY)
	// a replay may send to other than a message's own original route.
	Replay struct {
		Allow []string `yaml:"allow"`
	} `yaml:"replay"`
	// Redaction adds rules to the default ones, which always stay on.
	Redaction redactionConfig `yaml:"redaction"`
	Filters   struct {
		// TenantPath is the JSON path of the tenant in a payload.
		TenantPath string `yaml:"tenant_path"`
	} `yaml:"filters"`
	// AuditStream names the team's audit stream in the vhost (package
	// trail): every journal entry is confirmed there before it is written.
	// A context may name its own. AuditRetention applies when dlqt creates
	// the stream.
	AuditStream    string `yaml:"audit_stream"`
	AuditRetention struct {
		MaxAge   string `yaml:"max_age"`   // e.g. 400D, 12h (x-max-age)
		MaxBytes string `yaml:"max_bytes"` // e.g. 20GiB (x-max-length-bytes)
	} `yaml:"audit_retention"`
	// ReadOnly refuses discard and replay (and the TUI drops them).
	ReadOnly bool `yaml:"read_only"`
	// Health colours the TUI's queues screen (rate_warn, rate_crit in msg/s,
	// age_warn, age_crit as durations, depth_warn, depth_crit).
	Health views.HealthThresholds `yaml:"health"`
	// Contexts are named broker connections; CurrentContext is used when
	// neither --context nor DLQT_CONTEXT names one (contexts.go).
	Contexts       map[string]brokerContext `yaml:"contexts"`
	CurrentContext string                   `yaml:"current_context"`
	// Owners give event types or queues (globs) to a team, whose approvers
	// approve proposals on them; Approvals says which actions need one.
	Owners    []ownerConfig   `yaml:"owners"`
	Approvals approvalsConfig `yaml:"approvals"`
	// UsersFile names the people who propose and approve (the users file
	// of dlqt serve) and Key the SSH private key this user signs with.
	UsersFile string `yaml:"users_file"`
	Key       string `yaml:"key"`
	// ServerKey is the public key of the dlqt serve that signs the
	// decisions of its sessions and the journal's checkpoint.
	ServerKey string `yaml:"server_key"`
	// TLS, user, password and token sources, connect_timeout (connection.go);
	// a context's override these.
	connSettings `yaml:",inline"`
}

// redactionConfig is the redaction section: secrets by key name, by JSON
// path and by value pattern, each with a mask style.
type redactionConfig struct {
	Keys []struct {
		Name  string `yaml:"name"`
		Match string `yaml:"match"` // exact (default), suffix, contains
		Mask  string `yaml:"mask"`  // full (default), partial, hash
	} `yaml:"keys"`
	Paths []struct {
		Path string `yaml:"path"`
		Mask string `yaml:"mask"`
	} `yaml:"paths"`
	Patterns []struct {
		Name  string `yaml:"name"`
		Regex string `yaml:"regex"`
		Mask  string `yaml:"mask"`
	} `yaml:"patterns"`
}

// redactor builds the default redactor plus the configured rules; a rule
// that cannot be read is an error naming it.
func (c redactionConfig) redactor() (*redact.Redactor, error) {
	var keys []redact.KeyRule
	for i, k := range c.Keys {
		where := fmt.Sprintf("redaction.keys[%d] (%s)", i, k.Name)
		if strings.TrimSpace(k.Name) == "" {
			return nil, fmt.Errorf("redaction.keys[%d]: name is required", i)
		}
		match, err := redact.ParseKeyMatch(k.Match)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		mask, err := redact.ParseMask(k.Mask)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		keys = append(keys, redact.KeyRule{Name: k.Name, Match: match, Mask: mask})
	}
	var paths []redact.PathRule
	for i, p := range c.Paths {
		where := fmt.Sprintf("redaction.paths[%d] (%s)", i, p.Path)
		path, err := redact.ParseJSONPath(p.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		mask, err := redact.ParseMask(p.Mask)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		paths = append(paths, redact.PathRule{Path: path, Mask: mask})
	}
	var values []redact.ValueRule
	for i, p := range c.Patterns {
		mask, err := redact.ParseMask(p.Mask)
		if err != nil {
			return nil, fmt.Errorf("redaction.patterns[%d] (%s): %w", i, p.Name, err)
		}
		rule, err := redact.PatternRule(p.Name, p.Regex, mask)
		if err != nil {
			return nil, fmt.Errorf("redaction.patterns[%d]: %w", i, err)
		}
		values = append(values, rule)
	}
	return redact.New().With(keys, values).WithPaths(paths), nil
}

// loadFileConfig reads path. A missing file is no error when the path is
// the default one (explicit=false); an explicitly named one must exist.
func loadFileConfig(path string, explicit bool) (fileConfig, error) {
	var c fileConfig
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) { // io.EOF: an empty file
		var le lineError
		if errors.As(err, &le) {
			return c, fmt.Errorf("config %s:%d: %s", path, le.line, le.msg)
		}
		return c, fmt.Errorf("config %s: %s", path, yamlProblem(err))
	}
	if c.BrowseLimit < 0 {
		return c, fmt.Errorf("config %s: browse_limit must be positive, got %d", path, c.BrowseLimit)
	}
	return c, nil
}

// yamlProblem says what is wrong with a config file on one line, naming
// unknown keys as such.
func yamlProblem(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if notFound.MatchString(m) {
			m = strings.Replace(m, "field ", "unknown key ", 1)
		}
		msgs[i] = notFound.ReplaceAllString(m, "")
	}
	return strings.Join(msgs, "; ")
}

// notFound is the tail of yaml's unknown-key error, in any section.
var notFound = regexp.MustCompile(` not found in type .*$`)

// keymapYAML returns the config's keymap section as a keymap.yaml document,
// or nil when the config has none.
func (c fileConfig) keymapYAML() ([]byte, error) {
	if c.Keymap.Kind == 0 {
		return nil, nil
	}
	return yaml.Marshal(&c.Keymap)
}

// xdgPath returns $XDG_<kind>_HOME/dlqt/name with the XDG fallback.
func xdgPath(envVar, fallback, name string) string {
	base := os.Getenv(envVar)
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		base = filepath.Join(home, fallback)
	}
	return filepath.Join(base, "dlqt", name)
}

func defaultConfigPath() string  { return xdgPath("XDG_CONFIG_HOME", ".config", "config.yaml") }
func defaultJournalPath() string { return xdgPath("XDG_STATE_HOME", ".local/state", "journal.db") }

// defaultActor is login@host, the person an audit entry names.
func defaultActor() (actor, host string) {
	host, _ = os.Hostname()
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	return name + "@" + host, host
}
