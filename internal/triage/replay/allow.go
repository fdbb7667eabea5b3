package replay

import (
	"fmt"
	"path"

	"github.com/dlqt/dlqt/internal/triage"
)

// Allowed reports whether route matches one of the glob patterns of the
// replay allowlist (path.Match syntax over EXCHANGE:ROUTING_KEY). A bad
// pattern is an error, never a silent match.
func Allowed(route triage.Route, allow []string) (bool, error) {
	for _, p := range allow {
		ok, err := path.Match(p, route.String())
		if err != nil {
			return false, fmt.Errorf("replay.allow pattern %q: %w", p, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}
