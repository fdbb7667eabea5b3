package filter

import (
	"context"
	"runtime"
	"sync"

	"github.com/dlqt/dlqt/internal/triage"
)

// A read kept as index entries (triage.Spilled) has no payload or headers
// in memory: text~ and tenant= read each message back from disk, too slow
// for a key press over a whole queue. Resolve does that work once, off the
// caller's loop, and the filter it returns answers from the results.

// ReadsMessages reports a filter with a field (text, tenant) that reads a
// message's payload or headers.
func (f Filter) ReadsMessages() bool {
	for _, c := range f.clauses {
		if c.field.Name == "text" || c.field.Name == "tenant" {
			return true
		}
	}
	return false
}

// Resolved reports a filter that answers from Resolve's results.
func (f Filter) Resolved() bool { return f.resolved != nil }

// Resolve evaluates f on every message of ts, on every core, and returns f
// answering Match from those results, by message id. A message it did not
// see (a later read) is evaluated as any other. ctx stops it early (the
// user typed on), with ctx's error.
func (f Filter) Resolve(ctx context.Context, ts triage.List) (Filter, error) {
	n := ts.Len()
	if f.Empty() || n == 0 {
		return f, nil
	}
	matched := make([]bool, n)
	workers := max(1, runtime.GOMAXPROCS(0))
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, n)
		if lo >= hi {
			break
		}
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if i%256 == 0 && ctx.Err() != nil {
					return
				}
				t := ts.At(i)
				matched[i] = f.match(&t)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return f, err
	}
	f.resolved = make(map[string]bool, n)
	for i := range n {
		f.resolved[ts.At(i).ID] = matched[i]
	}
	f.resolvedOn = &resolvedSlice{on: ts, matched: matched}
	return f, nil
}

// resolvedSlice is Resolve's answer by index, for Apply over the very
// list it resolved (no lookup by id).
type resolvedSlice struct {
	on      triage.List
	matched []bool
}

// of returns the answers by index when ts is the list resolved.
func (r *resolvedSlice) of(ts []triage.Triaged) []bool {
	if r == nil || !triage.SameList(triage.Slice(ts), r.on) {
		return nil
	}
	return r.matched
}
