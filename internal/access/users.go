// Package access is who may connect to `dlqt serve` and what each may do: the users file maps SSH
// public keys to a name (the journal's actor) and a role, plus the teams a user may approve for.
package access

import (
	"fmt"
	"os"
	"regexp"
	"sort"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/ssh"
)

// Role is what a user may do in a session.
type Role string

const (
	// Viewer browses and reads; it cannot discard, replay or reveal.
	Viewer Role = "viewer"
	// Operator may do everything dlqt does.
	Operator Role = "operator"
)

// MayAct reports whether the role may run actions that change queues or show redacted values.
func (r Role) MayAct() bool { return r == Operator }

// Key is one authorized key of a user.
type Key struct {
	PublicKey   ssh.PublicKey
	Comment     string
	Fingerprint string // SHA256:..., as ssh-keygen -l prints it
	Line        int
}

// User is one person who may connect.
type User struct {
	Name     string
	Role     Role
	Keys     []Key
	Approves []string // teams whose approvals this user may give (issue 9)
	Line     int
}

// Users is a parsed users file. It is immutable: a reload builds a new one.
type Users struct {
	Path   string
	list   []*User
	byName map[string]*User
	byFP   map[string]*User
}

// FileError names the file and line of the first problem found in a users file.
type FileError struct {
	File string
	Line int
	Msg  string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// namePattern keeps actor names printable and unambiguous in the journal and on the status line.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// Load reads and parses the users file at path.
func Load(path string) (*Users, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a users file; path is used in error messages only.
func Parse(path string, data []byte) (*Users, error) {
	p := parser{file: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.yamlError(err)
	}
	us := &Users{Path: path, byName: map[string]*User{}, byFP: map[string]*User{}}
	if len(doc.Content) == 0 {
		return nil, p.errf(1, "no users: the file is empty")
	}
	list, err := p.usersList(doc.Content[0])
	if err != nil {
		return nil, err
	}
	for _, n := range list.Content {
		u, err := p.user(n)
		if err != nil {
			return nil, err
		}
		if err := us.add(p, u); err != nil {
			return nil, err
		}
	}
	if len(us.list) == 0 {
		return nil, p.errf(list.Line, "no users: nobody could connect")
	}
	return us, nil
}

func (us *Users) add(p parser, u *User) error {
	if prev, ok := us.byName[u.Name]; ok {
		return p.errf(u.Line, "user %q is listed twice (first at line %d)", u.Name, prev.Line)
	}
	for _, k := range u.Keys {
		if prev, ok := us.byFP[k.Fingerprint]; ok {
			return p.errf(k.Line, "key %s is listed for both %q and %q", k.Fingerprint, prev.Name, u.Name)
		}
		us.byFP[k.Fingerprint] = u
	}
	us.byName[u.Name] = u
	us.list = append(us.list, u)
	return nil
}

// ByKey is the user a public key belongs to.
func (us *Users) ByKey(k ssh.PublicKey) (*User, bool) {
	if us == nil || k == nil {
		return nil, false
	}
	return us.ByFingerprint(ssh.FingerprintSHA256(k))
}

// ByFingerprint is the user whose key has the SHA256 fingerprint fp ("SHA256:...").
func (us *Users) ByFingerprint(fp string) (*User, bool) {
	if us == nil {
		return nil, false
	}
	u, ok := us.byFP[fp]
	return u, ok
}

// ByName is the user called name.
func (us *Users) ByName(name string) (*User, bool) {
	if us == nil {
		return nil, false
	}
	u, ok := us.byName[name]
	return u, ok
}

// List is every user, in file order.
func (us *Users) List() []*User { return append([]*User(nil), us.list...) }

// Approvers is every user who may approve for team, sorted by name.
func (us *Users) Approvers(team string) []*User {
	var out []*User
	for _, u := range us.list {
		if u.MayApprove(team) {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MayApprove reports whether the user lists team under approves.
func (u *User) MayApprove(team string) bool {
	for _, t := range u.Approves {
		if t == team {
			return true
		}
	}
	return false
}
