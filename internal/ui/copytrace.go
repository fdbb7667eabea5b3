package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// traceCopiedMsg says where the message screen's stack trace was written.
type traceCopiedMsg struct {
	path string
	err  error
}

func (traceCopiedMsg) owner() screenID { return screenMessage }

// copyTrace copies the stack trace shown (redacted and sanitised, as on
// screen) whole: to the terminal's clipboard with OSC 52 when the terminal
// takes it (Options.Clipboard), else to a new file readable by its owner
// only, whose path the status line shows.
func (s *messageScreen) copyTrace() tea.Cmd {
	c := s.c
	text, from := s.Trace()
	if text == "" {
		c.hint = "this message has no stack trace to copy"
		return nil
	}
	lines := views.Plural(strings.Count(text, "\n")+1, "line")
	if c.opts.Clipboard {
		c.done = fmt.Sprintf("stack trace (%s, %s) copied to the clipboard", from, lines)
		return tea.SetClipboard(text)
	}
	dir, id := c.opts.TraceDir, s.Shown().ID
	return func() tea.Msg {
		path, err := writeTrace(dir, id, text)
		return traceCopiedMsg{path: path, err: err}
	}
}

// onTraceCopied says where the trace went.
func (s *messageScreen) onTraceCopied(r traceCopiedMsg) {
	if r.err != nil {
		s.c.setErr(fmt.Errorf("copying the stack trace: %w", r.err))
		return
	}
	s.c.done = "trace written to " + sanitize.Line(homeShort(r.path)) // short enough for 80 columns
}

// homeShort writes a path under the home directory with "~".
func homeShort(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rest
	}
	return path
}

// writeTrace writes text to a new 0600 file in dir (made 0700 when
// missing; the temporary directory when dir is ""), named after the
// message without what a file name must not hold.
func writeTrace(dir, id, text string) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, id)
	if len(name) > 24 {
		name = name[:24]
	}
	f, err := os.CreateTemp(dir, "dlqt-trace-"+strings.Trim(name, ".")+"-*.txt")
	if err != nil {
		return "", err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return "", err
	}
	_, err = f.WriteString(text + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return filepath.Clean(f.Name()), nil
}
