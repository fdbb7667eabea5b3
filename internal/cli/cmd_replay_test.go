package cli

import (
	"errors"
	"strings"
	"testing"
)

// --observe 0s used to become the 30 s default without a word (Options
// read zero as "unset"). It is refused, as the TUI's observe field refuses
// it: a canary nobody watches checks nothing, since a copy that fails
// again comes back after its publish.
func TestObserveZeroIsRefused(t *testing.T) {
	f := replayFlags{rate: 10, canary: 1, observe: 0}
	_, err := f.options(nil)
	var usage usageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--observe") {
		t.Fatalf("--observe 0s: err %v, want a usage error that names --observe", err)
	}
	f.observe = 1
	if _, err := f.options(nil); err != nil {
		t.Fatalf("--observe 1ns: %v", err)
	}
}
