package ui

import (
	"errors"
	"fmt"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/views"
)

// groupsScreen shows the groups of the queue the browse flow reads; the
// flow's replies (browse, tags, discard) come here.
type groupsScreen struct {
	*views.Groups
	fieldFilter
	flow    *browseFlow
	discard *discardFlow
}

func (s *groupsScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case spinner.TickMsg:
		return s, s.UpdateSpinner(msg)
	case browseProgressMsg:
		return s, s.flow.onProgress(msg)
	case inspectedMsg:
		return s, s.flow.onInspected(msg)
	case tagsMsg:
		s.flow.onTags(msg)
		return s, nil
	case taggedMsg:
		s.flow.onTagged(msg)
		return s, nil
	case discardedMsg:
		return s, s.discard.onDone(msg)
	}
	return s, listUpdate(s, &s.c.Keys, msg)
}

// key handles the screen's own keys, those the list left.
func (s *groupsScreen) key(k tea.KeyPressMsg) tea.Cmd {
	keys := s.c.Keys
	switch {
	case key.Matches(k, keys.Open):
		s.flow.openGroup()
	case key.Matches(k, keys.Back):
		s.flow.leave()
		return relist
	case key.Matches(k, keys.Refresh):
		return s.flow.refresh()
	default:
		return s.Groups.Update(k)
	}
	return nil
}

// target is the selected group as shown (filtered, and then it says so).
func (s *groupsScreen) target(insp *triage.Inspection) (target, error) {
	g, ok := s.Selected()
	if !ok {
		return target{}, errors.New("no group selected")
	}
	var tg target
	named := true // the key selects every member (it would not if groups were keyed otherwise)
	for _, i := range g.Members {
		t := insp.At(i)
		tg.ids = append(tg.ids, t.ID)
		named = named && triage.GroupKey{Reason: g.Reason, Code: g.ReasonCode}.Matches(t)
	}
	code := g.ReasonCode
	if code == "" {
		code = "(no reason_code)"
	}
	tg.what = fmt.Sprintf("group %s/%s", g.Reason, code)
	key := triage.GroupKey{Reason: g.Reason, Code: g.ReasonCode}
	if named {
		tg.group = &key
	}
	tg.chosenBy = map[string]any{"group": key.String()}
	if f := s.Filter(); !f.Empty() {
		tg.what += " where " + f.String()
		tg.chosenBy["where"] = f.Exprs()
	}
	tg.chosenBy["selection"] = fmt.Sprintf("%s, as shown: %s", tg.what, views.Plural(len(tg.ids), "message id"))
	return tg, nil
}
