package broker

import (
	"context"
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// A browse holds what it reads unacked until it releases it, and the broker
// keeps every held message in memory (the queue's pending acks and the
// channel's unacked map). A hold of a whole large queue could push a node
// over its memory high watermark, which blocks every publisher of the
// cluster. So before a hold, dlqt reads each node's memory use and high
// watermark and holds only what keeps the fullest node well below it.

const (
	// holdShare is the part of a node's headroom under its high watermark
	// that a hold may take; the rest stays for the broker's own traffic.
	holdShare = 0.5
	// heldOverhead is what the broker spends on a held message beside its
	// body (message record, pending-ack entry, the channel's unacked map):
	// an estimate on the high side.
	heldOverhead = 1024
	// unknownMemoryHold bounds a hold when the nodes' memory is unknown
	// (a user without the monitoring tag may not read /api/nodes).
	unknownMemoryHold = 100000
)

type nodeMemory struct {
	Name     string `json:"name"`
	MemUsed  int64  `json:"mem_used"`
	MemLimit int64  `json:"mem_limit"`
	MemAlarm bool   `json:"mem_alarm"`
	Running  bool   `json:"running"`
}

// safeHold is how many of want messages of q a browse may hold, and, when
// that is fewer, why.
func (l *Live) safeHold(ctx context.Context, q triage.Queue, want int) (int, string) {
	var nodes []nodeMemory
	err := l.mgmt.get(ctx, "nodes?columns=name,mem_used,mem_limit,mem_alarm,running", &nodes)
	if err != nil {
		if want <= unknownMemoryHold {
			return want, ""
		}
		return unknownMemoryHold, fmt.Sprintf("broker memory unknown (%v)", err)
	}
	return holdBound(nodes, q, want)
}

// holdBound is safeHold on the nodes' memory as read.
func holdBound(nodes []nodeMemory, q triage.Queue, want int) (int, string) {
	var tightest *nodeMemory
	var room int64 = -1
	for i := range nodes {
		n := &nodes[i]
		if !n.Running || n.MemLimit <= 0 {
			continue
		}
		r := int64(float64(n.MemLimit-n.MemUsed) * holdShare)
		if n.MemAlarm {
			r = 0
		}
		if room < 0 || r < room {
			room, tightest = max(r, 0), n
		}
	}
	if tightest == nil {
		return want, ""
	}
	var avg int64
	if q.Messages > 0 {
		avg = q.Bytes / int64(q.Messages)
	}
	fits := room / (avg + heldOverhead)
	if int64(want) <= fits {
		return want, ""
	}
	why := fmt.Sprintf("broker memory headroom (node %s uses %s of its %s high watermark)",
		tightest.Name, triage.SizeText(tightest.MemUsed), triage.SizeText(tightest.MemLimit))
	if tightest.MemAlarm {
		why = fmt.Sprintf("node %s is in a memory alarm", tightest.Name)
	}
	return int(fits), why
}
