package triage

// BuildTimeline orders every attempt the message carries evidence of.
func BuildTimeline(m Message, env Envelope, deaths []Death) []Event {
	panic("not implemented")
}
