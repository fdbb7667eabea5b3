package access

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/ssh"
)

// parser walks the yaml node tree by hand so that every error carries the line it is about.
type parser struct{ file string }

func (p parser) errf(line int, format string, args ...any) error {
	return &FileError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// yamlError turns a yaml syntax error into a FileError with its line.
func (p parser) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FileError{File: p.file, Line: line, Msg: m[2]}
	}
	return &FileError{File: p.file, Line: 1, Msg: msg}
}

// usersList is the sequence under the top-level `users:` key.
func (p parser) usersList(root *yaml.Node) (*yaml.Node, error) {
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root.Line, "expected a mapping with a users: list")
	}
	var list *yaml.Node
	err := p.fields(root, map[string]func(k, v *yaml.Node) error{
		"users": func(_, v *yaml.Node) error {
			if v.Kind != yaml.SequenceNode {
				return p.errf(v.Line, "users: expected a list")
			}
			list = v
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if list == nil {
		return nil, p.errf(root.Line, "no users: list")
	}
	return list, nil
}

// fields calls the handler of each key of a mapping and refuses keys without one.
func (p parser) fields(m *yaml.Node, handlers map[string]func(k, v *yaml.Node) error) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		h, ok := handlers[k.Value]
		if !ok {
			return p.errf(k.Line, "unknown field %q", k.Value)
		}
		if first, dup := seen[k.Value]; dup {
			return p.errf(k.Line, "field %q given twice (first at line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line
		if err := h(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (p parser) user(n *yaml.Node) (*User, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n.Line, "a user is a mapping with name, role and keys")
	}
	u := &User{Line: n.Line}
	var roleSet, keysSet bool
	err := p.fields(n, map[string]func(k, v *yaml.Node) error{
		"name": func(_, v *yaml.Node) error {
			if v.Kind != yaml.ScalarNode || !namePattern.MatchString(v.Value) {
				return p.errf(v.Line, "bad name %q: letters, digits and . _ @ - only, at most 64", v.Value)
			}
			u.Name = v.Value
			return nil
		},
		"role": func(_, v *yaml.Node) error {
			roleSet = true
			switch Role(v.Value) {
			case Viewer, Operator:
				u.Role = Role(v.Value)
				return nil
			}
			return p.errf(v.Line, "bad role %q: viewer or operator", v.Value)
		},
		"keys": func(_, v *yaml.Node) error {
			keysSet = true
			return p.keys(u, v)
		},
		"approves": func(_, v *yaml.Node) error { return p.approves(u, v) },
	})
	if err != nil {
		return nil, err
	}
	return u, p.complete(u, roleSet, keysSet)
}

func (p parser) complete(u *User, roleSet, keysSet bool) error {
	switch {
	case u.Name == "":
		return p.errf(u.Line, "user without a name")
	case !roleSet:
		return p.errf(u.Line, "user %q has no role (viewer or operator)", u.Name)
	case !keysSet || len(u.Keys) == 0:
		return p.errf(u.Line, "user %q has no keys", u.Name)
	}
	return nil
}

func (p parser) keys(u *User, v *yaml.Node) error {
	if v.Kind != yaml.SequenceNode {
		return p.errf(v.Line, "keys: expected a list of authorized_keys lines")
	}
	for _, kn := range v.Content {
		k, err := p.key(kn)
		if err != nil {
			return err
		}
		u.Keys = append(u.Keys, k)
	}
	return nil
}

// key parses one authorized_keys line. Options (from=, command=...) are refused rather than
// silently ignored: a reader of the file would believe they restrict the key.
func (p parser) key(n *yaml.Node) (Key, error) {
	if n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" {
		return Key{}, p.errf(n.Line, "a key is one authorized_keys line")
	}
	pk, comment, options, rest, err := ssh.ParseAuthorizedKey([]byte(n.Value))
	if err != nil {
		return Key{}, p.errf(n.Line, "malformed key: %v", keyError(err))
	}
	if len(options) > 0 {
		return Key{}, p.errf(n.Line, "key options (%s) are not supported", strings.Join(options, ","))
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return Key{}, p.errf(n.Line, "one key per list item")
	}
	return Key{PublicKey: pk, Comment: comment, Fingerprint: ssh.FingerprintSHA256(pk), Line: n.Line}, nil
}

func keyError(err error) string { return strings.TrimPrefix(err.Error(), "ssh: ") }

func (p parser) approves(u *User, v *yaml.Node) error {
	if v.Kind != yaml.SequenceNode {
		return p.errf(v.Line, "approves: expected a list of team names")
	}
	for _, t := range v.Content {
		if t.Kind != yaml.ScalarNode || !namePattern.MatchString(t.Value) {
			return p.errf(t.Line, "bad team %q in approves", t.Value)
		}
		if u.MayApprove(t.Value) {
			return p.errf(t.Line, "team %q listed twice in approves", t.Value)
		}
		u.Approves = append(u.Approves, t.Value)
	}
	return nil
}
