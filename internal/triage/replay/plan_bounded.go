package replay

import (
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// BoundedQueue is a destination queue with a length limit (x-max-length or
// x-max-length-bytes, by argument or policy), and how near it is: a replay
// into a full one pushes its oldest messages out (drop-head, the default)
// or is refused (reject-publish).
type BoundedQueue struct {
	Name           string `json:"name"`
	MaxLength      int64  `json:"max_length,omitempty"`       // 0: none
	MaxLengthBytes int64  `json:"max_length_bytes,omitempty"` // 0: none
	Overflow       string `json:"overflow"`
	Messages       int    `json:"messages"`
	Bytes          int64  `json:"bytes"`
	// Room is how many more messages fit by count; -1 when only bytes bound it.
	Room int64 `json:"room"`
}

// boundedQueues are the plan's destination queues that have a length limit.
func boundedQueues(queues []string, top triage.Topology) []BoundedQueue {
	var out []BoundedQueue
	for _, name := range queues {
		q, ok := top.Queue(name)
		if !ok || (q.MaxLength <= 0 && q.MaxLengthBytes <= 0) {
			continue
		}
		b := BoundedQueue{Name: name, MaxLength: q.MaxLength, MaxLengthBytes: q.MaxLengthBytes, Overflow: q.Overflow,
			Messages: q.Messages, Bytes: q.Bytes, Room: -1}
		if b.Overflow == "" {
			b.Overflow = "drop-head"
		}
		if q.MaxLength > 0 {
			b.Room = max(0, q.MaxLength-int64(q.Messages))
		}
		out = append(out, b)
	}
	return out
}

// boundedWarnings say, for the dry run, which destination queues are
// bounded and how near their limit they are, next to how many messages the
// plan sends: the canary cannot see a drop-head queue pushing out its own
// oldest messages unless they are dead-lettered into a watched queue.
func boundedWarnings(bs []BoundedQueue, items int) []string {
	var out []string
	for _, b := range bs {
		limit := ""
		switch {
		case b.MaxLength > 0 && b.MaxLengthBytes > 0:
			limit = fmt.Sprintf("max-length %d, max-length-bytes %d", b.MaxLength, b.MaxLengthBytes)
		case b.MaxLength > 0:
			limit = fmt.Sprintf("max-length %d", b.MaxLength)
		default:
			limit = fmt.Sprintf("max-length-bytes %d", b.MaxLengthBytes)
		}
		fill := fmt.Sprintf("holds %d messages", b.Messages)
		if b.MaxLengthBytes > 0 {
			fill += fmt.Sprintf(" (%d of %d bytes)", b.Bytes, b.MaxLengthBytes)
		}
		effect := "its oldest messages are pushed out (dead-lettered or dropped)"
		if b.Overflow != "drop-head" {
			effect = "the broker refuses the copies (" + b.Overflow + ")"
		}
		s := fmt.Sprintf("destination queue %s is bounded (%s, overflow %s) and %s", b.Name, limit, b.Overflow, fill)
		if b.Room >= 0 {
			s += fmt.Sprintf(", room for %d more", b.Room)
			if b.Room < int64(items) {
				s += fmt.Sprintf(": replaying %d goes past its limit, %s", items, effect)
			}
		} else {
			s += ": past its byte limit " + effect
		}
		out = append(out, s)
	}
	return out
}
