package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// osc52Terminal says whether the terminal dlqt runs in takes OSC 52
// clipboard writes, from what it says of itself: DLQT_CLIPBOARD=osc52 or
// =file decides; inside tmux or screen (which drop it unless configured)
// no; else the terminals known to take it. Unknown: no, and the message
// screen's copy writes a file instead, which always works.
func osc52Terminal(getenv func(string) string) bool {
	switch strings.ToLower(getenv("DLQT_CLIPBOARD")) {
	case "osc52":
		return true
	case "file":
		return false
	}
	if getenv("TMUX") != "" || strings.HasPrefix(getenv("TERM"), "screen") {
		return false
	}
	switch getenv("TERM_PROGRAM") {
	case "iTerm.app", "WezTerm", "ghostty", "vscode", "Tabby":
		return true
	}
	term := getenv("TERM")
	for _, t := range []string{"kitty", "alacritty", "foot", "wezterm", "ghostty"} {
		if strings.Contains(term, t) {
			return true
		}
	}
	return getenv("WT_SESSION") != "" // Windows Terminal
}

// traceDir is where a copied stack trace is written without a clipboard:
// the user's state directory (it is redacted, yet a message's content).
func traceDir() string { return filepath.Join(filepath.Dir(defaultJournalPath()), "traces") }

// clipboard is osc52Terminal for a local TUI. A served session always
// sends OSC 52 to the remote user's terminal (which this process cannot
// see; one without OSC 52 ignores it): a file would land on the server's
// disk, out of the user's reach, one more for every y a viewer presses.
func (a *app) clipboard() bool { return a.session != nil || osc52Terminal(os.Getenv) }
