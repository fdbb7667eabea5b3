package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

func (a *app) journalCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Export the journal as evidence, or verify its hash chain",
		Args:  exactArgs(0, "a subcommand: export or verify"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{errors.New("name a subcommand: dlqt journal export or dlqt journal verify")}
		},
	}
	cmd.AddCommand(a.journalExportCommand(), a.journalVerifyCommand())
	return cmd
}

func (a *app) journalExportCommand() *cobra.Command {
	var format, since, out string
	var stream bool
	cmd := &cobra.Command{
		Use:   "export [--format jsonl|csv] [--since DURATION] [--out FILE]",
		Short: "Write the journal's entries as JSONL (verifiable) or CSV",
		Long: `export writes the journal's entries, oldest first, to stdout or --out FILE.
JSONL keeps every hashed field, so dlqt journal verify --file can check it
later; CSV is for spreadsheets (message ids joined with ';', details as JSON).
--since 24h (or 7d) keeps the entries of that last stretch of time. The export
itself is then recorded in the journal.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stream {
				return a.exportTrail(cmd, out)
			}
			if format != journal.FormatJSONL && format != journal.FormatCSV {
				return usageError{fmt.Errorf("--format %q: want jsonl or csv", format)}
			}
			var from time.Time
			if since != "" {
				d, err := parseSince(since)
				if err != nil {
					return usageError{err}
				}
				from = time.Now().Add(-d)
			}
			j, err := a.openJournal()
			if err != nil {
				return err
			}
			w, done, err := exportTarget(cmd.OutOrStdout(), out)
			if err != nil {
				return err
			}
			n, err := journal.NewRecorder(j, a.actor, a.host).Export(w, format, from)
			if err = done(err); err != nil {
				return err
			}
			if out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "dlqt: exported %d journal entries to %s\n", n, out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", journal.FormatJSONL, "jsonl or csv")
	cmd.Flags().StringVar(&since, "since", "", "only entries of the last DURATION (e.g. 90m, 24h, 7d)")
	cmd.Flags().StringVar(&out, "out", "", "write to FILE instead of stdout")
	cmd.Flags().BoolVar(&stream, "stream", false, "export the team's audit stream (audit_stream) from its first offset instead: one JSON record a line, with writer and offset")
	return cmd
}

// exportTarget opens --out (readable by the owner only: it names messages
// and people) or falls back to stdout. done closes the file and removes it
// when the export failed, so no half export lies around as evidence.
func exportTarget(stdout io.Writer, path string) (io.Writer, func(error) error, error) {
	if path == "" {
		return stdout, func(err error) error { return err }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--out: %w", err)
	}
	return f, func(err error) error {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return fmt.Errorf("export to %s: %w", path, err)
		}
		return nil
	}, nil
}

// parseSince reads a Go duration, or whole days as "7d".
func parseSince(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--since %q: want a positive duration such as 90m, 24h or 7d", s)
	}
	return d, nil
}

func (a *app) journalVerifyCommand() *cobra.Command {
	var file string
	var stream bool
	cmd := &cobra.Command{
		Use:   "verify [--file EXPORT.jsonl]",
		Short: "Recompute the hash chain of the journal or of a JSONL export",
		Long: `verify recomputes every entry's hash and link, in the journal file or in an
export made with dlqt journal export, and fails naming the first entry that
does not match (changed, removed or inserted). An export made with --since
starts mid-chain: its entries are checked against each other only. It checks
the signature of every approval and rejection too (against the users file's
keys, and the server key for those made in dlqt serve sessions) and names
each entry whose signature fails.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stream {
				return a.verifyTrail(cmd)
			}
			var (
				entries []journal.Entry
				source  string
				err     error
			)
			if file != "" {
				source = file
				entries, err = readExport(file)
			} else {
				source = a.journalPath
				entries, err = readJournal(a)
			}
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(entries) == 0 && file == "" {
				fmt.Fprintf(w, "%s: no entries yet\n", source)
				return nil
			}
			if err := journal.VerifySegment(entries); err != nil {
				return fmt.Errorf("%s: %w", source, err)
			}
			if err := a.verifyDecisions(w, source, entries); err != nil {
				return err
			}
			if file == "" {
				if err := a.verifyCheckpoint(w, entries); err != nil {
					return fmt.Errorf("%s: %w", source, err)
				}
			}
			first, last := entries[0].Seq, entries[len(entries)-1].Seq
			fmt.Fprintf(w, "%s: chain intact, entries %d-%d verified\n", source, first, last)
			if first > 1 {
				fmt.Fprintf(w, "note: the file starts at entry %d; entries before it are not in it and were not checked\n", first)
			}
			if file == "" && a.auditStream != "" {
				return a.crossCheckTrail(cmd, entries)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "verify this JSONL export instead of the journal file")
	cmd.Flags().BoolVar(&stream, "stream", false, "verify the team's audit stream (audit_stream) from its first offset instead: every writer's chain")
	return cmd
}

func readExport(path string) ([]journal.Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	defer f.Close()
	es, err := journal.ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}

func readJournal(a *app) ([]journal.Entry, error) {
	if a.session != nil { // the server's journal, read between its writes
		return a.session.journal.Entries()
	}
	// Read-only: works on a read-only file, creates nothing, and refuses a
	// damaged journal (or one emptied or replaced) in one line. Closed
	// again at once: its shared lock keeps every writer out while open.
	j, err := journal.OpenReadOnly(a.journalPath, 2*time.Second)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("journal %s does not exist: nothing has been recorded there (pass --journal FILE?)", a.journalPath)
	}
	if err != nil {
		return nil, err
	}
	defer j.Close()
	return j.Entries()
}

// verifyDecisions checks the signature of every approval and rejection in
// entries: anyone who can write the journal file can append one that
// chains, only the approver's key (or the server's) can sign it. Each
// entry that fails is named on a line of w; an approval signed in the old
// format (the hash alone) is named as a note, since it approves nothing.
func (a *app) verifyDecisions(w io.Writer, source string, entries []journal.Entry) error {
	us, err := a.knownUsers()
	if err != nil {
		return err
	}
	keys, err := a.decisionKeys(us)
	if err != nil {
		return err
	}
	var bad []uint64
	for _, e := range entries {
		if e.Action != triage.ActionProposalApprove && e.Action != triage.ActionProposalReject {
			continue
		}
		var d approval.Decision
		raw, _ := json.Marshal(e.Details["decision"])
		err := json.Unmarshal(raw, &d)
		if err == nil && us == nil {
			err = errors.New("no users file to check it with (--users-file)")
		}
		if err == nil {
			err = keys.CheckDecision(d, d.Hash)
		}
		switch {
		case err == nil:
		case errors.Is(err, approval.ErrOldSignature) && d.Approve:
			fmt.Fprintf(w, "note: entry %d: signature of the hash alone (the format before decisions named what they decide): it approves nothing\n", e.Seq)
		default:
			bad = append(bad, e.Seq)
			fmt.Fprintf(w, "%s: entry %d: signature of the %s by %s fails: %s\n", source, e.Seq, e.Action, sanitize.Line(d.By), sanitize.Line(err.Error()))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: entry %d: signature fails (%d decision(s) in all): a decision the journal holds was not signed by whom it names", source, bad[0], len(bad))
	}
	return nil
}

// verifyCheckpoint compares the journal file with the checkpoint its
// writers signed (see journal.Checkpoint): a file re-chained under it
// fails; what it does not cover is a note.
func (a *app) verifyCheckpoint(w io.Writer, entries []journal.Entry) error {
	trusted, err := a.checkpointKeys()
	if err != nil {
		return err
	}
	note, err := journal.CheckCheckpoint(a.journalPath, entries, trusted)
	if note != "" {
		fmt.Fprintln(w, "note:", note)
	}
	return err
}

// checkpointKeys are the keys a checkpoint may be signed with: the
// server's, and this host's default key, which signs the checkpoints of
// local use (its public half is read; none is made).
func (a *app) checkpointKeys() ([]ssh.PublicKey, error) {
	server, err := a.serverKey()
	if err != nil {
		return nil, err
	}
	local, err := publicKeyAt(defaultHostKeyPath() + ".pub")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return []ssh.PublicKey{server, local}, nil
}

// checkCheckpointToAct refuses to act on a journal re-chained under its
// signed checkpoint: the next append would sign the forged chain anew.
// A checkpoint of a key unknown here is left to verify.
func (a *app) checkCheckpointToAct(j *journal.Shared) error {
	trusted, err := a.checkpointKeys()
	if err != nil {
		return err
	}
	if _, err := journal.CheckCheckpointOf(j, trusted); err != nil && !errors.Is(err, journal.ErrCheckpointKeyUnknown) {
		return fmt.Errorf("journal %s: %w; dlqt will not add to it (dlqt journal verify says more)", j.Path(), err)
	}
	return nil
}
