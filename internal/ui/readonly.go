package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// removeWriteKeys takes discard, replay (and resuming one) and reveal out
// of the keymap: help no longer lists them and no key triggers them. Their
// keys are kept aside so pressing one says why nothing happens.
func (m *Model) removeWriteKeys() {
	k := &m.c.Keys
	for _, b := range []*key.Binding{&k.Discard, &k.Replay, &k.ResumeReplay, &k.Reveal} {
		m.offKeys = append(m.offKeys, key.NewBinding(key.WithKeys(b.Keys()...)))
		b.SetEnabled(false)
	}
}

// readOnlyKey reports a key that read-only mode took away, unless another
// action of the keymap uses it on this screen.
func (m *Model) readOnlyKey(k tea.KeyPressMsg) bool {
	for _, b := range m.offKeys {
		if key.Matches(k, b) {
			return true
		}
	}
	return false
}
