package replay

import (
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/triagetest"
)

// Message builders shared with the other subpackages' tests (triagetest).
var (
	mustTime = triagetest.MustTime
	xdeath   = triagetest.XDeath
)

// deathList is an x-death value.
func deathList(entries ...triage.Headers) any {
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	return list
}

// edit changes item i of items.
func edit(items *Items, i int, change func(*Item)) {
	it := items.At(i)
	change(&it)
	items.Set(i, it)
}
