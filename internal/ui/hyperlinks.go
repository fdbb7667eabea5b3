package ui

import (
	"strconv"
	"strings"
)

// TerminalHyperlinks says whether the terminal described by getenv takes
// OSC 8 hyperlinks (the message page's trace link). A terminal that does
// not may print the sequence, so only those known to are named:
// FORCE_HYPERLINK (the convention of supports-hyperlinks) decides first;
// inside tmux or screen, which pass OSC 8 only when configured to, no.
func TerminalHyperlinks(getenv func(string) string) bool {
	if v := getenv("FORCE_HYPERLINK"); v != "" {
		return v != "0" && !strings.EqualFold(v, "false")
	}
	if getenv("TMUX") != "" || strings.HasPrefix(getenv("TERM"), "screen") || getenv("TERM") == "dumb" {
		return false
	}
	switch getenv("TERM_PROGRAM") {
	case "iTerm.app", "WezTerm", "vscode", "ghostty", "Hyper", "Tabby", "rio":
		return true
	}
	switch getenv("TERM") {
	case "xterm-kitty", "foot", "foot-extra", "alacritty", "xterm-ghostty", "wezterm":
		return true
	}
	if getenv("KITTY_WINDOW_ID") != "" || getenv("WT_SESSION") != "" || getenv("DOMTERM") != "" {
		return true
	}
	vte, err := strconv.Atoi(getenv("VTE_VERSION")) // GNOME Terminal and friends, since VTE 0.50
	return err == nil && vte >= 5000
}
