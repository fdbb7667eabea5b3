package triage

// Identify returns the stable identity of each message (same order).
func Identify(ms []Message, envs []Envelope) []string {
	panic("not implemented")
}
