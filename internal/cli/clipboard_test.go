package cli

import "testing"

func TestOSC52Terminal(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"unknown terminal: a file", map[string]string{"TERM": "xterm-256color"}, false},
		{"kitty", map[string]string{"TERM": "xterm-kitty"}, true},
		{"iTerm2", map[string]string{"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, true},
		{"Windows Terminal", map[string]string{"WT_SESSION": "abc"}, true},
		{"inside tmux, even in kitty", map[string]string{"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0", "TERM_PROGRAM": "tmux"}, false},
		{"GNU screen", map[string]string{"TERM": "screen-256color", "WT_SESSION": "abc"}, false},
		{"forced on", map[string]string{"TMUX": "x", "DLQT_CLIPBOARD": "osc52"}, true},
		{"forced off", map[string]string{"TERM": "xterm-kitty", "DLQT_CLIPBOARD": "file"}, false},
	}
	for _, tt := range tests {
		if got := osc52Terminal(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestAServedSessionCopiesToItsUsersTerminal: over dlqt serve, y sends
// OSC 52 to the remote terminal; it never writes files on the server,
// where a viewer could only fill its disk.
func TestAServedSessionCopiesToItsUsersTerminal(t *testing.T) {
	t.Setenv("TERM", "xterm-256color") // the server's own terminal knows no OSC 52
	t.Setenv("DLQT_CLIPBOARD", "file")
	if (&app{}).clipboard() {
		t.Fatal("a local TUI in a terminal without OSC 52 copies to the clipboard, want a file")
	}
	if !(&app{session: &sshSession{}}).clipboard() {
		t.Error("a served session writes the trace to a file on the server, want OSC 52 to its user's terminal")
	}
}
