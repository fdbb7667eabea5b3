package ui

import "testing"

func TestTerminalHyperlinks(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"TERM": "xterm-256color"}, false},
		{map[string]string{"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}, true},
		{map[string]string{"TERM": "xterm-kitty"}, true},
		{map[string]string{"TERM": "xterm-256color", "VTE_VERSION": "7600"}, true},
		{map[string]string{"TERM": "xterm-256color", "VTE_VERSION": "4205"}, false},
		{map[string]string{"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0", "TERM_PROGRAM": "tmux"}, false},
		{map[string]string{"TERM": "screen", "TERM_PROGRAM": "iTerm.app"}, false},
		{map[string]string{"TERM": "xterm", "FORCE_HYPERLINK": "1", "TMUX": "x"}, true},
		{map[string]string{"TERM": "xterm-kitty", "FORCE_HYPERLINK": "0"}, false},
	}
	for _, tt := range tests {
		if got := TerminalHyperlinks(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("%v: %v, want %v", tt.env, got, tt.want)
		}
	}
}
