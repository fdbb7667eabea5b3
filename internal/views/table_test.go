package views

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func testContext() *Context {
	b := func(keys ...string) key.Binding { return key.NewBinding(key.WithKeys(keys...)) }
	return &Context{Styles: NewStyles(true, false), Keys: KeyMap{
		Up: b("up"), Down: b("down"), PageUp: b("pgup"), PageDown: b("pgdown"), Top: b("home"), Bottom: b("end"),
	}}
}

func rows(n int) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = []string{fmt.Sprintf("queue-%02d", i), "classic"}
	}
	return out
}

func TestTableScrollsToKeepTheCursorVisible(t *testing.T) {
	tb := newTable(testContext(), []Column{{Title: "queue", Width: 10, Flex: 1}, {Title: "type", Width: 7}})
	tb.SetSize(40, 6) // header + 5 rows
	tb.SetRows(rows(20))
	tb.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	if i, _ := tb.Selected(); i != 19 {
		t.Fatalf("end selected %d, want 19", i)
	}
	view := tb.View()
	if !strings.Contains(view, "› queue-19") || strings.Contains(view, "queue-14") {
		t.Fatalf("the last rows are not the ones drawn:\n%s", view)
	}
	if n := len(strings.Split(view, "\n")); n != 6 {
		t.Fatalf("%d lines, want 6", n)
	}
	tb.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	if i, _ := tb.Selected(); i != 14 {
		t.Fatalf("page up selected %d, want 14", i)
	}
}

func TestTableFilterKeepsUnderlyingIndexes(t *testing.T) {
	tb := newTable(testContext(), []Column{{Title: "queue", Width: 10, Flex: 1}, {Title: "type", Width: 7}})
	tb.SetSize(40, 10)
	tb.SetRows(rows(20))
	tb.StartFilter()
	for _, r := range "QUEUE-1" {
		tb.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if tb.Len() != 10 { // queue-10 .. queue-19
		t.Fatalf("filter kept %d rows, want 10", tb.Len())
	}
	tb.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	tb.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if i, _ := tb.Selected(); i != 11 {
		t.Fatalf("selected row %d, want 11 (second match)", i)
	}
	if !strings.Contains(tb.View(), "(10 of 20)") {
		t.Fatalf("filter line missing:\n%s", tb.View())
	}
}
