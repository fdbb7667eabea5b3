package triage

// DefaultParkingPatterns are matched case-insensitively as substrings of queue names.
var DefaultParkingPatterns = []string{"dlq", "dead", "parking", "_error", ".error", "failed"}

// Routes returns the queues a message published to exchange with routingKey
// and headers would reach ("" is the default exchange).
func (t Topology) Routes(exchange, routingKey string, headers Headers) []string {
	panic("not implemented")
}

// FindParkingQueues lists the parking queues of a topology.
func FindParkingQueues(t Topology, patterns []string) []ParkingQueue {
	panic("not implemented")
}
