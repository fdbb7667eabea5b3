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

// ErrOldSignature is a decision signed over the proposal's hash alone, as
// dlqt signed decisions before they named what they decide: such a
// signature says neither approve nor reject, nor who.
var ErrOldSignature = fmt.Errorf("%w: it signs the proposal's hash alone (the old format), not what it decides", ErrBadSignature)

// Signer verifies armored as a signature over hash in the approval
// namespace and names whose key made it, with the key's fingerprint.
func Signer(hash, armored string, keys []PersonKey) (person, fingerprint string, err error) {
	sig, k, err := signatureOf(armored, keys)
	if k.Key == nil {
		if sig != nil {
			fingerprint = ssh.FingerprintSHA256(sig.PublicKey)
		}
		return "", fingerprint, err
	}
	fp := ssh.FingerprintSHA256(k.Key)
	if err := verify(hash, sig, k.Key); err != nil {
		return "", fp, fmt.Errorf("%w: key %s of %s: %v", ErrBadSignature, fp, k.Person, err)
	}
	return k.Person, fp, nil
}

// DecisionText is what a decision signs: the word, the proposal's hash and
// the approver's name, so that a rejection's signature never approves, and
// no signature is taken for someone else's decision.
// `printf %s "approve HASH carol" | ssh-keygen -Y sign -n dlqt-approval -f KEY`.
func DecisionText(approve bool, hash, by string) string {
	word := "reject"
	if approve {
		word = "approve"
	}
	return word + " " + hash + " " + by
}

// SignDecision signs approve or reject of hash by by with signer.
func SignDecision(approve bool, hash, by string, signer ssh.Signer) (string, error) {
	return Sign(DecisionText(approve, hash, by), signer)
}

// DecisionSigner verifies armored as the decision (approve or reject) of
// hash by the person whose key made it, and names them with the key's
// fingerprint. A signature of the other decision, or of the hash alone,
// is refused saying so.
func DecisionSigner(approve bool, hash, armored string, keys []PersonKey) (person, fingerprint string, err error) {
	sig, k, err := signatureOf(armored, keys)
	if k.Key == nil {
		return "", "", err
	}
	fp := ssh.FingerprintSHA256(k.Key)
	want := DecisionText(approve, hash, k.Person)
	if verify(want, sig, k.Key) == nil {
		return k.Person, fp, nil
	}
	switch {
	case verify(DecisionText(!approve, hash, k.Person), sig, k.Key) == nil:
		return "", fp, fmt.Errorf("%w: key %s of %s signed %q, not %q", ErrBadSignature, fp, k.Person, DecisionText(!approve, hash, k.Person), want)
	case verify(hash, sig, k.Key) == nil:
		return "", fp, fmt.Errorf("%w: sign %q instead", ErrOldSignature, want)
	}
	return "", fp, fmt.Errorf("%w: key %s of %s did not sign %q", ErrBadSignature, fp, k.Person, want)
}

// signatureOf unarmors a signature and finds the key of keys that made it;
// k.Key is nil (and err says why) when it is unreadable or no key is its.
func signatureOf(armored string, keys []PersonKey) (*sshsig.Signature, PersonKey, error) {
	sig, err := sshsig.Unarmor(bytes.TrimSpace([]byte(armored)))
	if err != nil {
		return nil, PersonKey{}, fmt.Errorf("%w: unreadable: %v", ErrBadSignature, err)
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	for _, k := range keys {
		if ssh.FingerprintSHA256(k.Key) == fp {
			return sig, k, nil
		}
	}
	return sig, PersonKey{}, fmt.Errorf("%w: key %s is in no user's keys", ErrBadSignature, fp)
}

func verify(text string, sig *sshsig.Signature, key ssh.PublicKey) error {
	return sshsig.Verify(strings.NewReader(text), sig, key, sig.HashAlgorithm, Namespace)
}

// Keys are what a journaled decision is checked against: the people's
// keys of the users file, and the key of the dlqt serve that signs the
// decisions made in its sessions (nil: none is known here).
type Keys struct {
	People []PersonKey
	Server ssh.PublicKey
}

// CheckDecision checks a journaled decision on the proposal of hash: a
// local one must be signed by a key of the person it names, for what it
// decides; one made in a dlqt serve session must be signed so by the
// server's key and name a session key of that person. Anyone who can
// write the journal file can append a decision; only these keys can sign
// one. A rejection signed in the old format still stands: it can only
// stop a proposal.
func (k Keys) CheckDecision(d Decision, hash string) error {
	if d.Hash != hash {
		return fmt.Errorf("it decides hash %s, not the proposal's %s", d.Hash, hash)
	}
	if d.Signature == "" {
		return errors.New("it is not signed")
	}
	if !d.Session {
		who, _, err := DecisionSigner(d.Approve, d.Hash, d.Signature, k.People)
		switch {
		case errors.Is(err, ErrOldSignature) && !d.Approve:
			return nil
		case err != nil:
			return err
		case who != d.By:
			return fmt.Errorf("%w: it names %s but %s signed it", ErrBadSignature, d.By, who)
		}
		return nil
	}
	if k.Server == nil {
		return errors.New("it was made in a dlqt serve session and no server key is known here to check it (server_key)")
	}
	if _, _, err := DecisionSigner(d.Approve, d.Hash, d.Signature, []PersonKey{{Person: d.By, Key: k.Server}}); err != nil {
		return fmt.Errorf("the server's signature: %w", err)
	}
	if !sessionKeyOf(d.By, d.Key, k.People) {
		return fmt.Errorf("session key %s is not %s's", d.Key, d.By)
	}
	return nil
}

func sessionKeyOf(person, fingerprint string, keys []PersonKey) bool {
	for _, k := range keys {
		if k.Person == person && ssh.FingerprintSHA256(k.Key) == fingerprint {
			return true
		}
	}
	return false
}

// Trusted is states with only the decisions that hold against k; dropped
// calls back with each one left out and why, for the caller to say.
func Trusted(states []State, k Keys, dropped func(State, Decision, error)) []State {
	out := make([]State, len(states))
	for i, s := range states {
		kept := s.Decisions[:0:0]
		for _, d := range s.Decisions {
			if err := k.CheckDecision(d, s.Hash); err != nil {
				if dropped != nil {
					dropped(s, d, err)
				}
				continue
			}
			kept = append(kept, d)
		}
		s.Decisions = kept
		out[i] = s
	}
	return out
}
