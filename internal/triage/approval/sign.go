package approval

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Namespace is the SSH signature namespace of approvals: a signature made
// for anything else (git commits, files) is never taken for an approval.
// `printf %s HASH | ssh-keygen -Y sign -n dlqt-approval -f KEY` makes one.
const Namespace = "dlqt-approval"

// PersonKey is one public key of a person in the users file.
type PersonKey struct {
	Person string
	Key    ssh.PublicKey
}

// Sign signs the proposal hash with signer, armored as ssh-keygen writes
// it.
func Sign(hash string, signer ssh.Signer) (string, error) {
	sig, err := sshsig.Sign(strings.NewReader(hash), signer, sshsig.HashSHA512, Namespace)
	if err != nil {
		return "", fmt.Errorf("sign proposal hash: %w", err)
	}
	return string(sshsig.Armor(sig)), nil
}

// ErrBadSignature means a signature did not verify, or no known key made it.
var ErrBadSignature = errors.New("signature does not verify")

// Signer verifies armored as a signature over hash in the approval
// namespace and names whose key made it, with the key's fingerprint.
func Signer(hash, armored string, keys []PersonKey) (person, fingerprint string, err error) {
	sig, err := sshsig.Unarmor(bytes.TrimSpace([]byte(armored)))
	if err != nil {
		return "", "", fmt.Errorf("%w: unreadable: %v", ErrBadSignature, err)
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	for _, k := range keys {
		if ssh.FingerprintSHA256(k.Key) != fp {
			continue
		}
		if err := sshsig.Verify(strings.NewReader(hash), sig, k.Key, sig.HashAlgorithm, Namespace); err != nil {
			return "", fp, fmt.Errorf("%w: key %s of %s: %v", ErrBadSignature, fp, k.Person, err)
		}
		return k.Person, fp, nil
	}
	return "", fp, fmt.Errorf("%w: key %s is in no user's keys", ErrBadSignature, fp)
}
