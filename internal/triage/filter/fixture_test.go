package filter

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
)

// Shared fixtures (triagetest): the graveyard topology and x-death builders.
var (
	parkingTopology = triagetest.GraveyardTopology
	xdeath          = triagetest.XDeath
	mustTime        = triagetest.MustTime
)

func mustPath(t *testing.T, s string) redact.JSONPath {
	t.Helper()
	p, err := redact.ParseJSONPath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
