package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// redactSnapshot returns s with every message's body and headers passed
// through red, as a teammate would see them on screen, and how many secrets
// it masked. JSON bodies stay JSON (re-indented), text bodies get free-text
// redaction, and the secret bytes of a binary body become '*'. The
// topology is kept: it names queues and exchanges, not payloads.
func redactSnapshot(s broker.SnapshotFile, red *redact.Redactor) (broker.SnapshotFile, int) {
	n := 0
	batches := make([]triage.Batch, len(s.Batches))
	for i, b := range s.Batches {
		ms := make([]triage.Message, len(b.Messages))
		for j, m := range b.Messages {
			var c int
			m.Headers, c = redact.Headers(m.Headers, red)
			n += c
			m.Body, c = redactBody(m.Body, m.Properties.ContentType, red)
			n += c
			ms[j] = m
		}
		b.Messages = ms
		batches[i] = b
	}
	s.Batches, s.Redacted = batches, true
	return s, n
}

func redactBody(body []byte, contentType string, red *redact.Redactor) ([]byte, int) {
	if len(body) == 0 {
		return body, 0
	}
	if sanitize.IsBinary(body, contentType) {
		hidden, n := red.HiddenBytes(body)
		if n == 0 {
			return body, 0
		}
		out := make([]byte, len(body))
		for i, b := range body {
			out[i] = b
			if hidden[i] {
				out[i] = '*'
			}
		}
		return out, n
	}
	if out, n, unread, err := red.JSON(body, 4*len(body)+1024); err == nil && unread == 0 {
		return []byte(out), n
	}
	out, n := red.Text(string(body))
	return []byte(out), n
}

// snapshotRequest is the snapshot command line.
type snapshotRequest struct {
	queues []string
	out    string
	raw    bool // --raw: bodies as they are
	yes    bool // --yes: no question for --raw
}

// writeSnapshot captures the queues and writes the file, redacted unless
// raw. A raw snapshot is consented to (asked on a terminal, --yes
// otherwise), said on stderr and journalled with the file's SHA-256: it
// carries the secrets of the queue out of the broker.
// The consent (consentRaw) is asked before, so no broker is touched for a
// refused one.
func (a *app) writeSnapshot(ctx context.Context, r triage.Reader, req snapshotRequest, errw io.Writer) error {
	opts := a.browseOptions()
	opts.Progress = progressTo(errw, "reading")
	snap, err := broker.Capture(ctx, r, req.queues, opts)
	if err != nil {
		return err
	}
	masked := 0
	if !req.raw {
		snap, masked = redactSnapshot(snap, a.redactor())
	}
	if err := broker.WriteSnapshotFile(req.out, snap); err != nil {
		return err
	}
	n := 0
	for _, b := range snap.Batches {
		n += len(b.Messages)
	}
	if req.raw {
		if err := a.journalRawSnapshot(req, snap, n); err != nil {
			os.Remove(req.out) // no entry, no raw file
			return fmt.Errorf("raw snapshot not kept: %w", err)
		}
		fmt.Fprintf(errw, "dlqt: wrote %d messages from %d queue(s) to %s RAW: bodies and headers unredacted, secrets included; the journal records it\n", n, len(snap.Batches), req.out)
		return nil
	}
	fmt.Fprintf(errw, "dlqt: wrote %d messages from %d queue(s) to %s, redacted (%d value(s) masked; --raw keeps them)\n", n, len(snap.Batches), req.out, masked)
	return nil
}

// consentRaw asks on a terminal; without one, only --yes consents.
func consentRaw(req snapshotRequest, stdin *os.File, errw io.Writer) error {
	if !req.raw || req.yes {
		return nil
	}
	if stdin == nil || !term.IsTerminal(stdin.Fd()) {
		return usageError{errors.New("--raw writes unredacted bodies and headers (secrets included): pass --yes to confirm without a terminal")}
	}
	fmt.Fprintf(errw, "dlqt: %s will hold unredacted bodies and headers, secrets included, and the journal will record it. Write it? [y/N] ", req.out)
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return errors.New("raw snapshot not written: not confirmed")
	}
	return nil
}

// journalRawSnapshot records who took which queues raw into which file.
func (a *app) journalRawSnapshot(req snapshotRequest, snap broker.SnapshotFile, messages int) error {
	sum, err := fileSHA256(req.out)
	if err != nil {
		return err
	}
	j, err := a.openJournal()
	if err != nil {
		return err
	}
	queues := make([]string, len(snap.Batches))
	for i, b := range snap.Batches {
		queues[i] = b.Queue
	}
	file, err := filepath.Abs(req.out)
	if err != nil {
		return err
	}
	return journal.NewRecorder(j, a.actor, a.host).Record(triage.Record{Action: triage.ActionSnapshotRaw, Vhost: snap.Topology.Vhost,
		Details: map[string]any{"queues": queues, "file": file, "sha256": sum, "messages": messages}})
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
