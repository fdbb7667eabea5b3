package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// The approval workflow's identities: locally a person is whoever holds a
// key of the users file and signs with it, so four eyes never rest on a
// self-declared --actor.

// loadUsers reads the users file; approvals need one. In a dlqt serve
// session it is the server's, as last (re)loaded.
func (a *app) loadUsers() (*access.Users, error) {
	if a.session != nil && a.session.users != nil {
		return a.session.users(), nil
	}
	if _, err := os.Stat(defaultUsersPath()); a.usersFile == "" && (err == nil || a.session != nil) {
		return access.Load(defaultUsersPath()) // dlqt serve's default users file
	}
	if a.usersFile == "" {
		return nil, usageError{errors.New("approvals need a users file naming the approvers and their keys: --users-file FILE (env DLQT_USERS_FILE, config users_file)")}
	}
	return access.Load(a.usersFile)
}

// personKeys are every key of the users file, by person, for checking a
// signature.
func personKeys(us *access.Users) []approval.PersonKey {
	var out []approval.PersonKey
	for _, u := range us.List() {
		for _, k := range u.Keys {
			out = append(out, approval.PersonKey{Person: u.Name, Key: k.PublicKey})
		}
	}
	return out
}

// person is a user as the approval rules see them.
func person(u *access.User) approval.Person {
	return approval.Person{Name: u.Name, Role: string(u.Role), Approves: u.Approves}
}

// signature is who signed hash: with --key, this process signs it;
// with armored (from ssh-keygen -Y sign), that signature is checked. The
// signer must hold a key of the users file.
//
// Under dlqt serve the session's key is the identity: the server checked
// it at login, so nothing is signed and the fingerprint is the session's.
func (a *app) signature(us *access.Users, hash, armored string) (u *access.User, sig, fingerprint string, err error) {
	if a.session != nil && armored == "" { // who the key is now: a reload may have changed their role or teams
		u, err := a.session.userNow()
		return u, "", a.session.Fingerprint, err
	}
	if armored == "" {
		signer, err := a.signer()
		if err != nil {
			return nil, "", "", err
		}
		if armored, err = approval.Sign(hash, signer); err != nil {
			return nil, "", "", err
		}
	}
	name, fp, err := approval.Signer(hash, armored, personKeys(us))
	if err != nil {
		return nil, "", fp, err
	}
	u, _ = us.ByName(name)
	return u, armored, fp, nil
}

// signer reads --key. A passphrase-protected key is refused with the way
// around it: sign with ssh-keygen (or the agent) and pass --signature.
func (a *app) signer() (ssh.Signer, error) {
	if a.keyFile == "" {
		return nil, usageError{errors.New("sign with your key: --key FILE (env DLQT_KEY, config key), or pass --signature FILE made by: printf %s HASH | ssh-keygen -Y sign -n " + approval.Namespace + " -f KEY")}
	}
	raw, err := os.ReadFile(a.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	s, err := ssh.ParsePrivateKey(raw)
	var pp *ssh.PassphraseMissingError
	if errors.As(err, &pp) {
		return nil, usageError{fmt.Errorf("--key %s has a passphrase: sign with printf %%s HASH | ssh-keygen -Y sign -n %s -f %s, and pass --signature", a.keyFile, approval.Namespace, a.keyFile)}
	}
	if err != nil {
		return nil, fmt.Errorf("--key %s: %w", a.keyFile, err)
	}
	return s, nil
}

// readSignature reads --signature FILE ("-" is stdin); "" is none.
func readSignature(path string) (string, error) {
	switch path {
	case "":
		return "", nil
	case "-":
		raw, err := io.ReadAll(os.Stdin)
		return string(raw), err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--signature: %w", err)
	}
	return string(raw), nil
}

// keyUser is the user of the users file who holds --key, as the approval
// commands name the signer; nil without --key or in a dlqt serve session,
// whose user is already the actor.
func (a *app) keyUser() (*access.User, error) {
	if a.keyFile == "" || a.session != nil {
		return nil, nil
	}
	if _, err := os.Stat(defaultUsersPath()); a.usersFile == "" && err != nil {
		return nil, nil // no users file: the key only signs, and names nobody
	}
	us, err := a.loadUsers()
	if err != nil {
		return nil, err
	}
	signer, err := a.signer()
	if err != nil {
		return nil, err
	}
	u, ok := us.ByKey(signer.PublicKey())
	if !ok {
		return nil, fmt.Errorf("--key %s is not a key of %s", a.keyFile, us.Path)
	}
	return u, nil
}
