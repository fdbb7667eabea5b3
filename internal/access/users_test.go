package access

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func newKey(t *testing.T, comment string) (ssh.PublicKey, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " " + comment
	return pk, line
}

func TestParseUsersFile(t *testing.T) {
	alicePK, alice := newKey(t, "alice@laptop")
	bobPK, bob := newKey(t, "bob@laptop")
	_, alice2 := newKey(t, "alice@desk")
	doc := "users:\n" +
		"  - name: alice\n" +
		"    role: operator\n" +
		"    approves: [payments, orders]\n" +
		"    keys:\n" +
		"      - " + alice + "\n" +
		"      - " + alice2 + "\n" +
		"  - name: bob\n" +
		"    role: viewer\n" +
		"    keys: [ \"" + bob + "\" ]\n"
	us, err := Parse("users.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := us.ByKey(alicePK)
	if !ok || a.Name != "alice" || a.Role != Operator || !a.Role.MayAct() || len(a.Keys) != 2 {
		t.Fatalf("alice by key: %+v %v", a, ok)
	}
	if a.Keys[0].Comment != "alice@laptop" || a.Keys[0].Line != 6 || a.Keys[1].Line != 7 {
		t.Errorf("alice's keys: %+v", a.Keys)
	}
	b, ok := us.ByFingerprint(ssh.FingerprintSHA256(bobPK))
	if !ok || b.Name != "bob" || b.Role != Viewer || b.Role.MayAct() || len(b.Approves) != 0 {
		t.Fatalf("bob by fingerprint: %+v %v", b, ok)
	}
	if n, ok := us.ByName("bob"); !ok || n != b {
		t.Errorf("bob by name: %+v %v", n, ok)
	}
	if _, ok := us.ByName("carol"); ok {
		t.Error("carol found")
	}
	stranger, _ := newKey(t, "")
	if u, ok := us.ByKey(stranger); ok {
		t.Errorf("a key not in the file belongs to %s", u.Name)
	}
	if got := us.Approvers("orders"); len(got) != 1 || got[0].Name != "alice" {
		t.Errorf("approvers of orders: %v", got)
	}
	if got := us.Approvers("billing"); len(got) != 0 {
		t.Errorf("approvers of billing: %v", got)
	}
	if names := []string{us.List()[0].Name, us.List()[1].Name}; names[0] != "alice" || names[1] != "bob" {
		t.Errorf("list order: %v", names)
	}
}

func TestParseUsersFileErrors(t *testing.T) {
	_, k1 := newKey(t, "one")
	_, k2 := newKey(t, "two")
	user := func(name, role, key string) string {
		return "  - name: " + name + "\n    role: " + role + "\n    keys:\n      - " + key + "\n"
	}
	tests := []struct {
		name, doc, want string
	}{
		{"unknown field", "users:\n  - name: a\n    rol: viewer\n", "users.yaml:3: unknown field \"rol\""},
		{"unknown top field", "users: []\nadmins: []\n", "users.yaml:2: unknown field \"admins\""},
		{"bad role", user("a", "admin", k1), "users.yaml:3: bad role \"admin\": viewer or operator"},
		{"malformed key", user("a", "viewer", "ssh-ed25519 AAAAnotbase64!!"), "users.yaml:5: malformed key"},
		{"not a key", user("a", "viewer", "hello"), "users.yaml:5: malformed key"},
		{"key options", user("a", "viewer", "from=\"10.0.0.1\" "+k1), "users.yaml:5: key options (from=\"10.0.0.1\") are not supported"},
		{"key for two users", user("a", "viewer", k1) + user("b", "operator", k2) + user("c", "viewer", k1),
			"users.yaml:13: key SHA256:"},
		{"same user twice", user("a", "viewer", k1) + user("a", "viewer", k2), "users.yaml:6: user \"a\" is listed twice (first at line 2)"},
		{"no role", "users:\n  - name: a\n    keys: [\"" + k1 + "\"]\n", "users.yaml:2: user \"a\" has no role"},
		{"no keys", "users:\n  - name: a\n    role: viewer\n", "users.yaml:2: user \"a\" has no keys"},
		{"empty keys", "users:\n  - name: a\n    role: viewer\n    keys: []\n", "users.yaml:2: user \"a\" has no keys"},
		{"no name", "users:\n  - role: viewer\n    keys: [\"" + k1 + "\"]\n", "users.yaml:2: user without a name"},
		{"bad name", "users:\n  - name: \"a b\"\n", "users.yaml:2: bad name \"a b\""},
		{"syntax", "users:\n  - name: a\n   role: [\n", "users.yaml:1: did not find expected '-' indicator"},
		{"tab", "users:\n\t- name: a\n", "users.yaml:2: found character that cannot start any token"},
		{"empty file", "", "users.yaml:1: no users"},
		{"no users", "users: []\n", "users.yaml:1: no users"},
		{"users not a list", "users: alice\n", "users.yaml:1: users: expected a list"},
		{"approves not a list", user("a", "viewer", k1) + "    approves: orders\n", "users.yaml:6: approves: expected a list"},
		{"approves twice", user("a", "viewer", k1) + "    approves: [x, x]\n", "users.yaml:6: team \"x\" listed twice"},
		{"field twice", "users:\n  - name: a\n    name: b\n", "users.yaml:3: field \"name\" given twice"},
		{"two keys on a line", "users:\n  - name: a\n    role: viewer\n    keys: [\"" + k1 + "\\n" + k2 + "\"]\n", "users.yaml:4: one key per list item"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc
			if strings.HasPrefix(doc, "  - ") {
				doc = "users:\n" + doc
			}
			_, err := Parse("users.yaml", []byte(doc))
			if err == nil {
				t.Fatalf("no error for\n%s", doc)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FileError: %T %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line starting %q", err, tc.want)
			}
		})
	}
}

func TestLoadUsersFile(t *testing.T) {
	_, k := newKey(t, "x")
	path := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(path, []byte("users:\n  - name: x\n    role: viewer\n    keys: [\""+k+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	us, err := Load(path)
	if err != nil || us.Path != path || len(us.List()) != 1 {
		t.Fatalf("load: %v %+v", err, us)
	}
	if _, err := Load(path + ".missing"); err == nil || !strings.Contains(err.Error(), "users file") {
		t.Errorf("missing file: %v", err)
	}
}
