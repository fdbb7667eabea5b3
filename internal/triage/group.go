package triage

// GroupMessages groups triaged messages by (reason, reason_code).
func GroupMessages(ts []Triaged) []Group {
	panic("not implemented")
}
