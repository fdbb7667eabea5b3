package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

func (a *app) quarantineCommand() *cobra.Command {
	var (
		position int
		yes      bool
	)
	cmd := &cobra.Command{
		Use:   "quarantine QUEUE --position N [--yes]",
		Short: "Save a message the AMQP client cannot decode to a file, then take it out of the queue",
		Long: `quarantine deals with a message whose headers the AMQP client cannot decode
(nested deeper than 32 levels, or a table of more than 8,192 entries): reading it
drops the connection, so no browse, discard or replay can get past it. dlqt
messages QUEUE names its position.

quarantine reads that message through the management API, leaving it in place,
and saves it as JSON (payload in base64, headers as the management API shows
them) under the state directory; the journal records the file and its SHA-256.
With --yes it then removes exactly that message: the messages before it are
held, the head is checked to be the saved message, taken, and the held ones
put back in their places. Without --yes nothing leaves the queue.`,
		Args: exactArgs(1, "one QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if position < 0 {
				return usageError{errors.New("--position N is required: the place of the unreadable message, as dlqt messages shows it")}
			}
			return a.quarantine(cmd.Context(), cmd.OutOrStdout(), args[0], position, yes)
		},
	}
	cmd.Flags().IntVar(&position, "position", -1, "place of the unreadable message in the queue, from 0")
	cmd.Flags().BoolVar(&yes, "yes", false, "remove it after saving; without --yes it is only saved")
	return cmd
}

// quarantineFile is what a quarantine file holds.
type quarantineFile struct {
	Vhost    string          `json:"vhost"`
	Queue    string          `json:"queue"`
	Position int             `json:"position"`
	Why      string          `json:"why"`
	SavedAt  time.Time       `json:"saved_at"`
	Digest   string          `json:"message_sha256"` // broker.RawMessage.Digest
	Message  json.RawMessage `json:"message"`        // the management API's get answer
}

func (a *app) quarantine(ctx context.Context, w io.Writer, queue string, position int, yes bool) error {
	if a.demo || a.snapshotPath != "" {
		return usageError{errors.New("quarantine reads the broker: a snapshot has no unreadable messages")}
	}
	rec, live, done, err := a.openForChange(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := live.CanSetAside(ctx, queue); err != nil {
		return err
	}
	raw, err := live.PeekRaw(ctx, queue, position)
	if err != nil {
		return err
	}
	why := raw.Undecodable()
	if why == "" {
		return fmt.Errorf("the message at position %d of %s (id %s) is readable: use dlqt discard for it; nothing done",
			position, sanitize.Line(queue), dash(sanitize.Line(raw.MessageID())))
	}
	path, sum, err := a.saveQuarantined(queue, position, why, raw)
	if err != nil {
		return err
	}
	base := triage.Record{Action: triage.ActionQuarantine, Vhost: a.vhost, Queue: queue, MessageIDs: idsOf(raw)}
	details := map[string]any{"file": path, "file_sha256": sum, "message_sha256": raw.Digest(), "position": position, "why": why}
	saved := base
	saved.Reason, saved.Details = "saved", details
	if err := rec.Record(saved); err != nil {
		return fmt.Errorf("saved %s but could not journal it, so nothing is removed: %w", path, err)
	}
	fmt.Fprintf(w, "message at position %d of %s (id %s): %s\nsaved to %s (sha256 %s)\n",
		position, sanitize.Line(queue), dash(sanitize.Line(raw.MessageID())), why, path, sum)
	if !yes {
		fmt.Fprintln(w, "nothing removed: run again with --yes to take it out of the queue")
		return nil
	}
	return a.removeQuarantined(ctx, w, live, rec, base, details, queue, position, raw)
}

// removeQuarantined journals the decision, removes the message and journals
// what happened.
func (a *app) removeQuarantined(ctx context.Context, w io.Writer, live *broker.Live, rec triage.Recorder,
	base triage.Record, details map[string]any, queue string, position int, raw broker.RawMessage) error {
	decision := base
	decision.Reason, decision.Details = "remove", details
	if err := rec.Record(decision); err != nil {
		return fmt.Errorf("could not journal the removal, so nothing is removed: %w", err)
	}
	taken, rmErr := live.RemoveAt(ctx, queue, position, raw)
	outcome := base
	outcome.Reason, outcome.Details = "removed", details
	if rmErr != nil {
		outcome.Reason = "not removed: " + rmErr.Error()
	}
	if rmErr != nil && len(taken.JSON) > 0 {
		// Another message left the queue instead (a consumer raced us):
		// it must not be lost, so it is saved like the one meant.
		path, sum, err := a.saveQuarantined(queue, position, "taken instead of the saved message", taken)
		if err != nil {
			return errors.Join(rmErr, fmt.Errorf("and it could not be saved (id %s): %w", sanitize.Line(taken.MessageID()), err))
		}
		outcome.MessageIDs = append(slices.Clone(outcome.MessageIDs), idsOf(taken)...)
		outcome.Details = map[string]any{"file": details["file"], "taken_instead_file": path, "taken_instead_sha256": sum}
		rmErr = fmt.Errorf("%w; the message taken instead is saved to %s", rmErr, path)
	}
	if err := rec.Record(outcome); err != nil {
		return errors.Join(rmErr, fmt.Errorf("could not journal the outcome: %w", err))
	}
	if rmErr != nil {
		return rmErr
	}
	fmt.Fprintf(w, "removed it from %s; the other messages are back in their places\n", sanitize.Line(queue))
	return nil
}

// saveQuarantined writes the message to a new file under the state
// directory, readable by its owner only (payloads may hold personal data),
// and returns its path and SHA-256.
func (a *app) saveQuarantined(queue string, position int, why string, raw broker.RawMessage) (path, sum string, err error) {
	q := quarantineFile{Vhost: a.vhost, Queue: queue, Position: position, Why: why,
		SavedAt: time.Now().UTC(), Digest: raw.Digest(), Message: raw.JSON}
	data, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return "", "", err
	}
	s := sha256.Sum256(data)
	sum = hex.EncodeToString(s[:])
	name := fmt.Sprintf("%s-%s-%s.json", q.SavedAt.Format("20060102T150405Z"), safeName(queue), q.Digest[:12])
	path = xdgPath("XDG_STATE_HOME", ".local/state", filepath.Join("quarantine", name))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", "", fmt.Errorf("quarantine: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", "", fmt.Errorf("quarantine: %w", err)
	}
	return path, sum, nil
}

// safeName keeps a queue name usable in a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

func idsOf(raw broker.RawMessage) []string {
	if id := raw.MessageID(); id != "" {
		return []string{id}
	}
	return nil
}

// UnreadableRow is the line messages --json writes for a message the AMQP
// client cannot decode, after the messages before it.
type UnreadableRow struct {
	Position   int    `json:"position"`
	MessageID  string `json:"message_id,omitempty"`
	Unreadable string `json:"unreadable"`
}

func unreadableRow(u *triage.Unreadable) UnreadableRow {
	return UnreadableRow{Position: u.Position, MessageID: sanitize.Line(u.MessageID), Unreadable: u.Reason}
}

// unreadableNotice tells what a browse stopped at and the way past it.
func unreadableNotice(b triage.Batch) string {
	u := b.Unreadable
	id := ""
	if u.MessageID != "" {
		id = " (id " + sanitize.Line(u.MessageID) + ")"
	}
	return fmt.Sprintf("the message at position %d%s of %s cannot be decoded by the AMQP client: %s; "+
		"read the %d before it, the rest is unknown. `dlqt quarantine %s --position %d` saves it to a file and, with --yes, removes it",
		u.Position, id, sanitize.Line(b.Queue), u.Reason, b.Count(), sanitize.Line(b.Queue), u.Position)
}
