package triage

// ClassifyReason tells a broker death into queue m.Queue from an application publish.
func ClassifyReason(m Message, deaths []Death, top Topology) Reason {
	panic("not implemented")
}

// ReasonCodeOf finds the application's stable reason code, or "".
func ReasonCodeOf(m Message, env Envelope) string {
	panic("not implemented")
}
