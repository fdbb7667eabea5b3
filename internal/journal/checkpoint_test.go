package journal

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func checkpointKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The checkpoint holds the file to what its key signed: the same entries
// pass, a changed entry under it, fewer entries, an unknown signer or a
// checkpoint edited by hand fail; what it does not cover is a note.
func TestCheckCheckpoint(t *testing.T) {
	path := written(t, 5)
	es := mustEntries(t, path)
	server, stranger := checkpointKey(t), checkpointKey(t)
	trusted := []ssh.PublicKey{nil, server.PublicKey()}
	if note, err := CheckCheckpoint(path, es, trusted); err != nil || !strings.Contains(note, "no signed checkpoint") {
		t.Errorf("no checkpoint: %q %v, want a note", note, err)
	}
	if err := WriteCheckpoint(path, es[3], server); err != nil {
		t.Fatal(err)
	}
	if note, err := CheckCheckpoint(path, es, trusted); err != nil || !strings.Contains(note, "entries 5-5") {
		t.Errorf("checkpoint at 4 of 5: %q %v, want a note on entry 5", note, err)
	}
	changed := append([]Entry(nil), es...)
	changed[3].Hash = strings.Repeat("0", 64)
	for name, c := range map[string]struct {
		es      []Entry
		trusted []ssh.PublicKey
		want    string
	}{
		"entry 4 changed":   {changed, trusted, "entry 4 is not the one signed"},
		"entries removed":   {es[:3], trusted, "signs 4 entries and the file holds 3"},
		"an unknown signer": {es, []ssh.PublicKey{stranger.PublicKey()}, "not the server's key"},
	} {
		if _, err := CheckCheckpoint(path, c.es, c.trusted); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "head does not match the signed checkpoint") {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	data, _ := os.ReadFile(CheckpointPath(path))
	edited := strings.Replace(string(data), `"entries":4`, `"entries":3`, 1)
	if err := os.WriteFile(CheckpointPath(path), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckCheckpoint(path, es, trusted); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a checkpoint edited by hand: %v, want its signature refused", err)
	}
}
