package filter

import (
	"sync"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// SearchCache keeps what text~ and tenant read of each message (its
// redacted payload and headers), so a filter bar that parses a new Filter
// on every key press redacts each message once, not once per key. Use one
// per read of a queue: it knows a message by queue, id and body size
// (PayloadBytes, which an index entry of a spilled read keeps). It keeps
// entries up to its byte limit, then makes the rest afresh each time, so
// a read of a million messages costs it no more than the limit.
// It is safe for concurrent use.
type SearchCache struct {
	mu      sync.Mutex
	red     *redact.Redactor // the redactor the entries were made with
	entries map[searchKey]*searchEntry
	limit   int64 // bytes the entries may take; <= 0: no limit
	used    int64
}

type searchKey struct {
	queue, id string
	size      int
}

type searchEntry struct {
	payload  string
	haystack string
	tenants  map[string][]string // by tenant path
}

// NewSearchCache returns an empty cache that keeps up to limit bytes of
// search text (<= 0: no limit).
func NewSearchCache(limit int64) *SearchCache { return &SearchCache{limit: limit} }

// cost is about what e takes in the cache: its texts, its key and the
// map's slot.
func (e *searchEntry) cost(k searchKey) int64 {
	return int64(len(e.payload)+len(e.haystack)+len(k.queue)+len(k.id)) + 128
}

// entry returns the cached views of t as red renders them, making them on
// first use. A cache used with another redactor starts afresh, so an entry
// never holds text that a stricter rule set would mask.
func (c *SearchCache) entry(t triage.Triaged, red *redact.Redactor, build func() *searchEntry) *searchEntry {
	key := searchKey{t.Message.Queue, t.ID, t.PayloadBytes} // an index entry has no body, but its size
	c.mu.Lock()
	if c.red != red || c.entries == nil {
		c.red, c.entries, c.used = red, map[searchKey]*searchEntry{}, 0
	}
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return e
	}
	e = build()
	c.mu.Lock()
	if cost := e.cost(key); c.red == red && (c.limit <= 0 || c.used+cost <= c.limit) {
		if _, had := c.entries[key]; !had {
			c.entries[key] = e
			c.used += cost
		}
	}
	c.mu.Unlock()
	return e
}

// tenants returns the cached tenant values of e for path, computing them
// with values on first use.
func (c *SearchCache) tenants(e *searchEntry, path string, values func() []string) []string {
	c.mu.Lock()
	vs, ok := e.tenants[path]
	c.mu.Unlock()
	if ok {
		return vs
	}
	vs = values()
	c.mu.Lock()
	if e.tenants == nil {
		e.tenants = map[string][]string{}
	}
	e.tenants[path] = vs
	c.mu.Unlock()
	return vs
}
