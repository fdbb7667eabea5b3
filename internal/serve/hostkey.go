package serve

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// EnsureHostKey creates an ed25519 host key at path (mode 0600, its
// directory 0700) unless one is there, and returns its public key's
// fingerprint, which the server prints so users can check what ssh shows.
// A key file others can read is refused: whoever reads it can impersonate
// the server.
func EnsureHostKey(path string) (fingerprint string, err error) {
	signer, err := HostSigner(path)
	if err != nil {
		return "", err
	}
	return gossh.FingerprintSHA256(signer.PublicKey()), nil
}

// HostSigner is EnsureHostKey's key, to sign with: the server signs the
// decisions of its sessions with it. Its public half is written beside it
// (path.pub, readable by all), where a dlqt outside the server finds the
// key those signatures must verify with (server_key).
func HostSigner(path string) (gossh.Signer, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = writeHostKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("host key %s: mode %o lets others read it: chmod 600 it", path, st.Mode().Perm())
	}
	signer, err := gossh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	pub := gossh.MarshalAuthorizedKey(signer.PublicKey())
	if old, err := os.ReadFile(path + ".pub"); err != nil || !bytes.Equal(old, pub) {
		if err := os.WriteFile(path+".pub", pub, 0o644); err != nil {
			return nil, fmt.Errorf("host key %s.pub: %w", path, err)
		}
	}
	return signer, nil
}

func writeHostKey(path string) ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := gossh.MarshalPrivateKey(priv, "dlqt serve host key")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	data := pem.EncodeToMemory(block)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	return data, f.Close()
}
