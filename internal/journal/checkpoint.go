package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Checkpoint is the chain's head signed with the key of the dlqt that
// wrote it (the server's host key), kept beside the journal in
// <journal>.checkpoint. The head file only says what the last writer saw;
// whoever can write the journal can re-chain it and rewrite the head file
// too, but not sign a checkpoint for the entries they changed. A later
// issue anchors it on the broker; until then it lives beside the file.
type Checkpoint struct {
	Entries   uint64 `json:"entries"`
	Head      string `json:"head"`
	Key       string `json:"key"`       // the signer's public key, authorized_keys form
	Signature string `json:"signature"` // armored SSH signature of CheckpointText
}

// checkpointNamespace keeps a checkpoint signature from ever being taken
// for an approval (namespace dlqt-approval), or the other way round.
const checkpointNamespace = "dlqt-journal-checkpoint"

// CheckpointPath is where the checkpoint of the journal at path lives.
func CheckpointPath(path string) string { return path + ".checkpoint" }

func checkpointText(entries uint64, head string) string {
	return fmt.Sprintf("dlqt journal checkpoint %d %s", entries, head)
}

// WriteCheckpoint signs e as the head of the journal at path and replaces
// its checkpoint atomically (a reader sees the old one or the new one).
func WriteCheckpoint(path string, e Entry, signer ssh.Signer) error {
	sig, err := sshsig.Sign(strings.NewReader(checkpointText(e.Seq, e.Hash)), signer, sshsig.HashSHA512, checkpointNamespace)
	if err != nil {
		return err
	}
	c := Checkpoint{Entries: e.Seq, Head: e.Hash, Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), Signature: string(sshsig.Armor(sig))}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return replaceFile(CheckpointPath(path), data)
}

// CheckCheckpoint compares the journal's entries es with its signed
// checkpoint: signed by one of trusted, over an entry the file still has
// with that hash. A file re-chained or replaced under the checkpoint fails
// with "head does not match the signed checkpoint". note says what the
// check could not cover: no checkpoint at all (a journal from before them,
// one written only by a dlqt without a key, or one removed), or entries
// appended after it.
func CheckCheckpoint(path string, es []Entry, trusted []ssh.PublicKey) (note string, err error) {
	return checkCheckpoint(path, uint64(len(es)), func(seq uint64) (string, error) { return es[seq-1].Hash, nil }, trusted)
}

// CheckCheckpointOf is CheckCheckpoint for an open journal, as dlqt opens
// it to act: it reads the one entry the checkpoint signs, so a journal
// re-chained under its checkpoint is refused before anything is added to
// it (and signed again) at the cost of one read.
func CheckCheckpointOf(s *Shared, trusted []ssh.PublicKey) (note string, err error) {
	_, n, err := s.Page(0, 1)
	if err != nil {
		return "", err
	}
	return checkCheckpoint(s.Path(), n, func(seq uint64) (string, error) {
		es, _, err := s.Page(seq+1, 1)
		if err != nil || len(es) != 1 || es[0].Seq != seq {
			return "", fmt.Errorf("entry %d does not read: %v", seq, err)
		}
		return es[0].Hash, nil
	}, trusted)
}

// checkCheckpoint is CheckCheckpoint for a journal of n entries whose
// hashes hashAt reads.
func checkCheckpoint(path string, n uint64, hashAt func(seq uint64) (string, error), trusted []ssh.PublicKey) (note string, err error) {
	data, err := os.ReadFile(CheckpointPath(path))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("no signed checkpoint beside the journal (%s): its head is not anchored outside the file", filepath.Base(CheckpointPath(path))), nil
	}
	if err != nil {
		return "", err
	}
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("the signed checkpoint %s does not read: %v", CheckpointPath(path), err)
	}
	if err := c.verify(trusted); err != nil {
		return "", fmt.Errorf("head does not match the signed checkpoint %s: %w", CheckpointPath(path), err)
	}
	if c.Entries > n {
		return "", fmt.Errorf("head does not match the signed checkpoint: it signs %d entries and the file holds %d (entries were removed or the file was replaced)", c.Entries, n)
	}
	if c.Entries > 0 {
		h, err := hashAt(c.Entries)
		if err != nil {
			return "", err
		}
		if h != c.Head {
			return "", fmt.Errorf("head does not match the signed checkpoint: entry %d is not the one signed (the file was re-chained or replaced)", c.Entries)
		}
	}
	if c.Entries < n {
		return fmt.Sprintf("entries %d-%d were appended after the signed checkpoint (by a dlqt without its key) and only the chain vouches for them", c.Entries+1, n), nil
	}
	return "", nil
}

// ErrCheckpointKeyUnknown is a checkpoint signed by a key this dlqt does
// not know: verify fails on it; opening to act does not, since another
// dlqt's key (a server's this one was not told of) signs this way too.
var ErrCheckpointKeyUnknown = errors.New("the checkpoint's key is not known here")

// verify checks that a key of trusted signed c.
func (c Checkpoint) verify(trusted []ssh.PublicKey) error {
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(c.Key))
	if err != nil {
		return fmt.Errorf("its key does not read: %v", err)
	}
	fp := ssh.FingerprintSHA256(key)
	known := false
	for _, k := range trusted {
		known = known || (k != nil && bytes.Equal(k.Marshal(), key.Marshal()))
	}
	if !known {
		return fmt.Errorf("%w: key %s signed it, which is not the server's key (server_key) nor this host's", ErrCheckpointKeyUnknown, fp)
	}
	sig, err := sshsig.Unarmor([]byte(c.Signature))
	if err != nil {
		return fmt.Errorf("its signature does not read: %v", err)
	}
	if err := sshsig.Verify(strings.NewReader(checkpointText(c.Entries, c.Head)), sig, key, sig.HashAlgorithm, checkpointNamespace); err != nil {
		return fmt.Errorf("its signature by %s does not verify: %v", fp, err)
	}
	return nil
}
