package serve

import (
	"sync"

	"charm.land/ssh"
)

// The largest terminal a session's TUI is drawn for. Bubble Tea keeps
// about 220 bytes per cell: a client's pty-req of 2000x2000 took the
// server from 23 to 889 MiB and 5000x5000 ended it out of memory, with
// every other session. 500x300 is more than any screen shows.
const (
	maxPtyWidth  = 500
	maxPtyHeight = 300
)

// clampedPty is a session whose pty-req and window-change sizes are held
// to maxPtyWidth x maxPtyHeight before they reach Bubble Tea.
type clampedPty struct {
	ssh.Session
	once    sync.Once
	changes <-chan ssh.Window
}

func clampPty(sess ssh.Session) *clampedPty { return &clampedPty{Session: sess} }

// Pty is the session's pty with its size clamped, and its window changes,
// clamped the same way.
func (c *clampedPty) Pty() (ssh.Pty, <-chan ssh.Window, bool) {
	pty, changes, ok := c.Session.Pty()
	if !ok {
		return pty, changes, ok
	}
	pty.Window = clampWindow(pty.Window)
	c.once.Do(func() {
		out := make(chan ssh.Window, 1)
		c.changes = out
		go func() {
			defer close(out)
			for w := range changes { // closed with the session's requests
				select {
				case out <- clampWindow(w):
				case <-c.Context().Done():
					return
				}
			}
		}()
	})
	return pty, c.changes, ok
}

func clampWindow(w ssh.Window) ssh.Window {
	w.Width, w.Height = min(max(w.Width, 0), maxPtyWidth), min(max(w.Height, 0), maxPtyHeight)
	return w
}
