package ui

import (
	"github.com/dlqt/dlqt/internal/triage"
)

// plantedDoctor is the scenario with a topology bug planted: billing.work
// dead-letters to an exchange that does not exist.
func plantedDoctor() *fakeReader {
	r := scenario()
	r.top.Queues = append(r.top.Queues, triage.Queue{Name: "billing.work", Type: triage.QueueClassic,
		DeadLetterExchange: "billing.dlx", HasDeadLetterExchange: true})
	return r
}
