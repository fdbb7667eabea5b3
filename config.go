package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
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
	// Keymap overrides key bindings by action name, like keymap.yaml.
	Keymap yaml.Node `yaml:"keymap"`
	// Replay.Allow lists the destinations (globs over EXCHANGE:ROUTING_KEY)
	// a replay may send to other than a message's own original route.
	Replay struct {
		Allow []string `yaml:"allow"`
	} `yaml:"replay"`
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
		m = strings.Replace(m, "field ", "unknown key ", 1)
		msgs[i] = strings.Replace(m, " not found in type main.fileConfig", "", 1)
	}
	return strings.Join(msgs, "; ")
}

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
