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

// DecodeQueue decodes one queue object of the management API as Topology does.
func DecodeQueue(raw string) (triage.Queue, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var q queueJSON
	err := dec.Decode(&q)
	return q.domain(), err
}
