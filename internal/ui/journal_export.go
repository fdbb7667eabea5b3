package ui

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// journalExporter is the journal's export, as `dlqt journal export` runs it.
type journalExporter interface {
	Export(w io.Writer, format string, since time.Time) (int, error)
}

// journalExportMsg says where the journal screen's export went.
type journalExportMsg struct {
	path string
	n    int
	what string // "journal entries", "records of the audit stream dlqt.audit"
	err  error
}

func (journalExportMsg) owner() screenID { return screenJournal }

// exportJournalCmd writes the whole journal as JSONL (verifiable with dlqt
// journal verify --file) to a new file in the current directory, else beside
// the journal, and journals the export as the headless command does.
func exportJournalCmd(c *programContext) tea.Cmd {
	if err := c.noJournal(); err != nil { // the export is journalled: not before the check passed
		c.setErr(fmt.Errorf("export: %w", err))
		return nil
	}
	ex, ok := c.opts.Journal.(journalExporter)
	if !ok {
		c.setErr(fmt.Errorf("export: this journal cannot be exported from here; run dlqt journal export"))
		return nil
	}
	rec := c.recorder()
	dirs := []string{".", filepath.Dir(c.opts.Journal.Path())}
	name := "dlqt-journal-" + c.now().UTC().Format("20060102T150405Z") + ".jsonl"
	return func() tea.Msg {
		path, n, err := exportTo(ex, dirs, name)
		if err == nil {
			err = rec.Record(triage.Record{Action: triage.ActionExport,
				Details: map[string]any{"format": journal.FormatJSONL, "count": n, "file": path}})
		}
		return journalExportMsg{path: path, n: n, what: "journal entries", err: err}
	}
}

// exportTeamTrailCmd writes the team's audit stream as JSONL records
// (verifiable as dlqt journal export --stream writes them) to a new file
// in the current directory, else beside the journal, and journals the
// export.
func exportTeamTrailCmd(c *programContext, stream string) tea.Cmd {
	if err := c.noJournal(); err != nil {
		c.setErr(fmt.Errorf("export: %w", err))
		return nil
	}
	if c.opts.ExportTeamTrail == nil {
		c.setErr(fmt.Errorf("export: the team's trail cannot be exported from here; run dlqt journal export --stream"))
		return nil
	}
	rec := c.recorder()
	ex := exportFunc(c.opts.ExportTeamTrail)
	dirs := []string{".", filepath.Dir(c.opts.Journal.Path())}
	name := "dlqt-trail-" + c.now().UTC().Format("20060102T150405Z") + ".jsonl"
	c.busy = "exporting the audit stream " + sanitize.Line(stream) + "…"
	return func() tea.Msg {
		path, n, err := exportTo(ex, dirs, name)
		if err == nil {
			err = rec.Record(triage.Record{Action: triage.ActionExport,
				Details: map[string]any{"format": journal.FormatJSONL, "count": n, "file": path, "stream": stream}})
		}
		return journalExportMsg{path: path, n: n, what: "records of the audit stream " + sanitize.Line(stream), err: err}
	}
}

// exportFunc is an export that writes one format, whole.
type exportFunc func(w io.Writer) (int, error)

func (f exportFunc) Export(w io.Writer, _ string, _ time.Time) (int, error) { return f(w) }

// exportTo writes the export to the first directory that takes a new file
// (readable by its owner only: it names messages and people).
func exportTo(ex journalExporter, dirs []string, name string) (string, int, error) {
	var lastErr error
	for _, dir := range dirs {
		path, err := filepath.Abs(filepath.Join(dir, name))
		if err != nil {
			lastErr = err
			continue
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			lastErr = err
			continue
		}
		n, err := ex.Export(f, journal.FormatJSONL, time.Time{})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path) // no half export lies around as evidence
			return "", 0, err
		}
		return path, n, nil
	}
	return "", 0, lastErr
}

func (s *journalScreen) onExport(msg journalExportMsg) tea.Cmd {
	s.c.busy = ""
	if msg.err != nil {
		s.c.setErr(fmt.Errorf("export: %w", msg.err))
		return nil
	}
	s.c.done = fmt.Sprintf("exported %d %s to %s", msg.n, msg.what, msg.path)
	return s.reload() // the export is an entry too
}
