package triage

// Unreadable stands in a batch for a message the AMQP client cannot decode
// (headers nested too deep or too many entries): reading it drops the
// connection, so a browse stops there and names it instead of failing whole.
type Unreadable struct {
	// Position is its place in the queue, from 0, or -1 when unknown.
	Position  int    `json:"position"`
	MessageID string `json:"message_id,omitempty"`
	Reason    string `json:"reason"`
}
