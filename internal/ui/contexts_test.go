package ui

import (
	"strings"
	"testing"
)

func TestContextSwitcher(t *testing.T) {
	h := newHarness(t, Options{Context: "prod-eu", Contexts: []ContextChoice{
		{Name: "prod-eu", Vhost: "shop", ReadOnly: true},
		{Name: "staging", Vhost: "shop-staging"},
	}}, 100, 30)
	h.mustShow(" context prod-eu │ fake broker")

	h.press("switch_context")
	h.mustShow("* prod-eu", "vhost shop ", "read-only", "staging", "vhost shop-staging")
	h.press("back")
	if h.m.c.dialog != nil || h.quit {
		t.Fatalf("esc left the picker open or quit:\n%s", h.m.Screen())
	}

	h.press("switch_context")
	h.press("down")
	h.press("open")
	if !h.quit || h.m.switchTo != "staging" {
		t.Fatalf("enter on staging: quit %v, switchTo %q", h.quit, h.m.switchTo)
	}
}

func TestContextSwitcherWithoutContexts(t *testing.T) {
	h := newHarness(t, Options{}, 100, 30)
	h.press("switch_context")
	if h.m.c.dialog != nil {
		t.Fatal("a picker opened with no contexts")
	}
	h.mustShow("no contexts in the config file")
	if strings.Contains(h.m.status(), "context") {
		t.Fatalf("status line names a context without one: %q", h.m.status())
	}
}
