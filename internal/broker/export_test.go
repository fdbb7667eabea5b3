package broker

import (
	"encoding/json"
	"strings"

	"github.com/dlqt/dlqt/internal/triage"
)

// The header conversions are unexported; the tests in broker_test (which
// need brokertest, and so cannot live in package broker) reach them here.
var (
	TableToHeaders = tableToHeaders
	HeadersToTable = headersToTable
)

// DecodeQueue decodes one queue object of the management API as Topology
// does on a 3.10 broker.
func DecodeQueue(raw string) (triage.Queue, error) {
	return DecodeQueueOn(raw, triage.BrokerVersion{Major: 3, Minor: 10, Patch: 8})
}

// DecodeQueueOn decodes one queue object as Topology does on version v.
func DecodeQueueOn(raw string, v triage.BrokerVersion) (triage.Queue, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var q queueJSON
	err := dec.Decode(&q)
	return q.domain(v), err
}

// AckFrames is how many Ack frames the replay's hold sent, a multiple
// ack as one.
func (r *Replay) AckFrames() int {
	r.held.mu.Lock()
	defer r.held.mu.Unlock()
	return r.held.ackFrames
}
