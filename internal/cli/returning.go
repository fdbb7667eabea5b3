package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
	"github.com/dlqt/dlqt/internal/views"
)

// returningTo says on w, once, that a read of queue waits for the broker
// to return the messages of an earlier read (broker.Browse waits for them
// before it reads: a read begun meanwhile would take the part already back
// for the whole queue).
func returningTo(w io.Writer, queue string) func(n int) {
	var once sync.Once
	return func(n int) {
		once.Do(func() {
			fmt.Fprintf(w, "dlqt: %s: %s\n", sanitize.Line(queue), views.Returning(n))
		})
	}
}
