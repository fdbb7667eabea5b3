package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/dlqt/dlqt/internal/triage/approval"
)

// ownerConfig is one rule of the owners section; line is where it starts,
// for an error that names file:line.
type ownerConfig struct {
	Match struct {
		EventType string `yaml:"event_type"`
		Queue     string `yaml:"queue"`
	} `yaml:"match"`
	Team string `yaml:"team"`
	line int
}

// UnmarshalYAML decodes a rule strictly and keeps its line.
func (o *ownerConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain ownerConfig
	if err := knownKeys(n, "owners", "match", "team"); err != nil {
		return err
	}
	if m := mappingValue(n, "match"); m != nil {
		if err := knownKeys(m, "owners.match", "event_type", "queue"); err != nil {
			return err
		}
	}
	var p plain
	if err := n.Decode(&p); err != nil {
		return lineErr(n.Line, "owners: %s", yamlProblem(err))
	}
	*o = ownerConfig(p)
	o.line = n.Line
	return nil
}

// approvalsConfig is the approvals section: a threshold per gated action
// and how long a proposal waits for its approver.
type approvalsConfig struct {
	policy      approval.Policy
	expireAfter time.Duration
}

type thresholdConfig struct {
	MinMessages int `yaml:"min_messages"`
}

// UnmarshalYAML reads the section by hand so that an unknown action or a
// bad threshold is reported at its line.
func (c *approvalsConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return lineErr(n.Line, "approvals must be a mapping of action: {min_messages: N}")
	}
	c.policy = approval.Policy{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "expire_after" {
			d, err := time.ParseDuration(v.Value)
			if err != nil || d <= 0 {
				return lineErr(v.Line, "approvals.expire_after: want a positive duration such as 24h, got %q", v.Value)
			}
			c.expireAfter = d
			continue
		}
		if !slices.Contains(approval.Gates, k.Value) {
			return lineErr(k.Line, "approvals: unknown action %q (want %s, or expire_after)", k.Value, strings.Join(approval.Gates, ", "))
		}
		var t thresholdConfig
		if v.Kind != yaml.ScalarNode || v.Tag != "!!null" {
			if err := knownKeys(v, "approvals."+k.Value, "min_messages"); err != nil {
				return err
			}
			if err := v.Decode(&t); err != nil {
				return lineErr(v.Line, "approvals.%s: %s", k.Value, yamlProblem(err))
			}
		}
		if t.MinMessages < 0 {
			return lineErr(v.Line, "approvals.%s.min_messages must not be negative, got %d", k.Value, t.MinMessages)
		}
		c.policy[k.Value] = approval.Threshold{MinMessages: t.MinMessages}
	}
	return nil
}

// knownKeys refuses a mapping key not in allowed, naming its line (a
// node's Decode does not inherit the file decoder's KnownFields).
func knownKeys(n *yaml.Node, section string, allowed ...string) error {
	if n.Kind != yaml.MappingNode {
		return lineErr(n.Line, "%s must be a mapping (%s)", section, strings.Join(allowed, ", "))
	}
	for i := 0; i < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(allowed, k.Value) {
			return lineErr(k.Line, "%s: unknown key %q (want %s)", section, k.Value, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// mappingValue is the value of key in mapping n, nil when absent.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// ownerRules checks each rule and returns them in order; an error names the
// file and the rule's line.
func ownerRules(path string, cs []ownerConfig) (approval.Owners, error) {
	out := make(approval.Owners, 0, len(cs))
	for i, c := range cs {
		r := approval.OwnerRule{EventType: c.Match.EventType, Queue: c.Match.Queue, Team: c.Team}
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("config %s:%d: owners[%d]: %w", path, c.line, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// lineError is a problem at a line of the config file; loadFileConfig
// prints it as FILE:LINE.
type lineError struct {
	line int
	msg  string
}

func (e lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func lineErr(line int, format string, args ...any) error {
	return lineError{line: line, msg: fmt.Sprintf(format, args...)}
}
