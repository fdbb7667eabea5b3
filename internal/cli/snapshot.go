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
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// redactSnapshot returns s with every message's body and headers passed
// through red, as a teammate would see them on screen, and how many secrets
// it masked. The topology is kept: it names queues and exchanges, not
// payloads.
func redactSnapshot(s broker.SnapshotFile, red *redact.Redactor) (broker.SnapshotFile, int) {
	n := 0
	batches := make([]triage.Batch, len(s.Batches))
	for i, b := range s.Batches {
		var c int
		batches[i], c = redactBatch(b, red)
		n += c
	}
	s.Batches, s.Redacted = batches, true
	return s, n
}

// redactBatch is redactSnapshot for one batch: JSON bodies stay JSON
// (re-indented), text bodies get free-text redaction, and the secret bytes
// of a binary body become '*'. b's messages are not changed.
func redactBatch(b triage.Batch, red *redact.Redactor) (triage.Batch, int) {
	n := 0
	ms := make([]triage.Message, len(b.Messages))
	for j, m := range b.Messages {
		var c int
		ms[j], c = redactMessage(m, red)
		n += c
	}
	b.Messages = ms
	return b, n
}

// redactMessage is one message's headers and body through red, and how
// many values it masked.
func redactMessage(m triage.Message, red *redact.Redactor) (triage.Message, int) {
	var h, b int
	m.Headers, h = redact.Headers(m.Headers, red)
	m.Body, b = redactEncodedBody(m.Body, m.Properties, red)
	return m, h + b
}

// redactEncodedBody redacts a gzip or deflate body inside its encoding
// (decoded, redacted, encoded again the same way): its compressed bytes
// hide its secrets from redactBody. One that cannot be decoded is redacted
// as the bytes it is; one cut at the decoding limit keeps the redacted
// part it was read to.
func redactEncodedBody(body []byte, p triage.Properties, red *redact.Redactor) ([]byte, int) {
	decoded, d := triage.DecodeBody(body, p.ContentEncoding)
	if d == nil || d.Error != "" {
		return redactBody(body, p.ContentType, red)
	}
	out, n := redactBody(decoded, p.ContentType, red)
	return triage.EncodeBody(out, p.ContentEncoding), n
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

// writeSnapshot captures the queues into the file, gzip-compressed,
// redacted unless raw. Each queue's batch is written as its browse returns
// and dropped: a capture holds one batch at a time, never the snapshot. A
// raw snapshot is consented to (asked on a terminal, --yes otherwise), said
// on stderr and journalled with the file's SHA-256: it carries the secrets
// of the queue out of the broker. The consent (consentRaw) is asked
// before, so no broker is touched for a refused one.
func (a *app) writeSnapshot(ctx context.Context, r triage.Reader, req snapshotRequest, errw io.Writer) error {
	opts := a.browseOptions()
	opts.Progress = progressTo(errw, "reading")
	top, err := r.Topology(ctx)
	if err != nil {
		return err
	}
	out, err := broker.CreateSnapshotFile(req.out, broker.SnapshotFile{Source: r.Describe(), TakenAt: time.Now().UTC(),
		Topology: top, Redacted: !req.raw})
	if err != nil {
		return err
	}
	var red *redact.Redactor
	if !req.raw {
		red = a.redactor()
	}
	n, masked, queues := 0, 0, []string{}
	for _, q := range req.queues {
		read, c, err := captureQueue(ctx, r, top.Vhost, q, opts, out, red)
		if err != nil {
			out.Abort()
			return err
		}
		n, masked, queues = n+read, masked+c, append(queues, q)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if req.raw {
		if err := a.journalRawSnapshot(req, top.Vhost, queues, n); err != nil {
			os.Remove(req.out) // no entry, no raw file
			return fmt.Errorf("raw snapshot not kept: %w", err)
		}
		fmt.Fprintf(errw, "dlqt: wrote %d messages from %d queue(s) to %s RAW: bodies and headers unredacted, secrets included; the journal records it\n", n, len(queues), req.out)
		return nil
	}
	fmt.Fprintf(errw, "dlqt: wrote %d messages from %d queue(s) to %s, redacted (%d value(s) masked; --raw keeps them)\n", n, len(queues), req.out, masked)
	return nil
}

// captureQueue writes one queue's batch into out as its browse hands the
// messages over (a reader that does not stream hands them all at the end),
// redacted through red unless it is nil, and says how many it wrote and
// how many values it masked.
func captureQueue(ctx context.Context, r triage.Reader, vhost, queue string, opts triage.BrowseOptions,
	out *broker.SnapshotOnDisk, red *redact.Redactor) (written, masked int, err error) {
	write := func(m triage.Message) error {
		if red != nil {
			var c int
			m, c = redactMessage(m, red)
			masked += c
		}
		written++
		return out.Message(m)
	}
	if err := out.BeginBatch(vhost, queue); err != nil {
		return 0, 0, err
	}
	opts.Each = write
	b, err := r.Browse(ctx, queue, opts)
	if err != nil {
		return written, masked, err
	}
	for _, m := range b.Messages {
		if err := write(m); err != nil {
			return written, masked, err
		}
	}
	return written, masked, out.EndBatch(b)
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
func (a *app) journalRawSnapshot(req snapshotRequest, vhost string, queues []string, messages int) error {
	sum, err := fileSHA256(req.out)
	if err != nil {
		return err
	}
	j, err := a.openJournal()
	if err != nil {
		return err
	}
	file, err := filepath.Abs(req.out)
	if err != nil {
		return err
	}
	return journal.NewRecorder(j, a.actor, a.host).Record(triage.Record{Action: triage.ActionSnapshotRaw, Vhost: vhost,
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
