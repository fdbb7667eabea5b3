package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/ui"
)

// With --key and a users file, the TUI acts as the key's user, as propose,
// approve and run name it, not as login@host: its status line and journal
// entries say carol.
func TestTUIActsAsTheKeysUser(t *testing.T) {
	dir := t.TempDir()
	keyFile, users := carolsKey(t, dir)
	snap, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	demo := Assets{DemoSnapshot: snap}
	a := &app{assets: demo, demo: true, actor: "root@vm", host: "vm", keyFile: keyFile, usersFile: users, journalPath: filepath.Join(dir, "j.db")}
	opts, closeReader, err := a.tuiOptions(context.Background(), ui.KeyMap{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeReader()
	if opts.Actor != "carol" || a.actor != "carol" {
		t.Fatalf("the TUI acts as %q (app %q); want carol, the key's user", opts.Actor, a.actor)
	}

	stranger := &app{assets: demo, demo: true, actor: "root@vm", host: "vm", keyFile: keyFile, usersFile: writeUsersWithout(t, dir), journalPath: filepath.Join(dir, "j2.db")}
	opts, closeReader, err = stranger.tuiOptions(context.Background(), ui.KeyMap{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeReader()
	if opts.Actor != "root@vm" || !strings.Contains(opts.Notice, "is not a key of") {
		t.Fatalf("an unknown key: actor %q, notice %q; want root@vm and why", opts.Actor, opts.Notice)
	}
}

// carolsKey writes a private key and a users file naming carol its owner.
func carolsKey(t *testing.T, dir string) (keyFile, users string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "carol@laptop")
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	users = filepath.Join(dir, "users.yaml")
	doc := "users:\n  - name: carol\n    role: operator\n    keys: [\"" + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + "\"]\n"
	if err := os.WriteFile(users, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return keyFile, users
}

// The headless commands act as the key's user too, from the flags or the
// environment; without a users file the key names nobody and the actor
// stays login@host.
func TestCommandsActAsTheKeysUser(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	keyFile, users := carolsKey(t, dir)
	resolve := func(args ...string) *app {
		a := &app{}
		cmd := &cobra.Command{Use: "dlqt", RunE: func(*cobra.Command, []string) error { return nil }}
		a.bindFlags(cmd)
		if err := cmd.ParseFlags(append([]string{"--demo", "--actor", "root@vm"}, args...)); err != nil {
			t.Fatal(err)
		}
		if err := a.resolve(cmd); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := resolve("--key", keyFile, "--users-file", users); a.actor != "carol" {
		t.Errorf("with carol's key: actor %q", a.actor)
	}
	t.Setenv("DLQT_KEY", keyFile)
	t.Setenv("DLQT_USERS_FILE", users)
	if a := resolve(); a.actor != "carol" {
		t.Errorf("with DLQT_KEY: actor %q", a.actor)
	}
	t.Setenv("DLQT_USERS_FILE", "")
	if a := resolve(); a.actor != "root@vm" {
		t.Errorf("without a users file: actor %q, want root@vm", a.actor)
	}
}

// writeUsersWithout writes a users file whose only user holds another key.
func writeUsersWithout(t *testing.T, dir string) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "others.yaml")
	doc := "users:\n  - name: dave\n    role: operator\n    keys: [\"" + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + "\"]\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
