package views

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
)

// inventoryGroups are issue 20's inventory.dlq, fingerprinted.
func inventoryGroups() *triage.Inspection {
	return &triage.Inspection{Groups: []triage.Group{
		{Reason: triage.ReasonPublished, ReasonCode: "NullPointerException @ InventoryService.reserve", Count: 3412,
			ExceptionType: "java.lang.NullPointerException", ThrownAt: "com.acme.inventory.InventoryService.reserve:88", EventTypes: []string{"inventory.reserve"}},
		{Reason: triage.ReasonPublished, ReasonCode: "JsonParseException @ InventoryService.reserve", Count: 1588,
			ExceptionType: "com.fasterxml.jackson.core.JsonParseException", ThrownAt: "com.acme.inventory.InventoryService.reserve:88", EventTypes: []string{"inventory.reserve"}},
	}}
}

// TestGroupsShowFingerprintWithItsLine: a fingerprinted group reads "short
// type @ where:line", whole at 80 columns, through the real redactor.
func TestGroupsShowFingerprintWithItsLine(t *testing.T) {
	for _, width := range []int{80, 120} {
		g := NewGroups(testContext())
		g.SetSize(width, 10)
		g.Open("inventory.dlq")
		g.SetInspection(inventoryGroups())
		view := ansi.Strip(g.View())
		for _, want := range []string{"NullPointerException @ InventoryService.reserve:88", "JsonParseException @ InventoryService.reserve:88"} {
			if !strings.Contains(view, want) {
				t.Errorf("at %d columns the screen lacks %q:\n%s", width, want, view)
			}
		}
	}
}
