package triage

// DecodeEnvelope reads the seed-003 envelope from a body, tolerating missing
// fields, other shapes, non-JSON and binary bodies.
func DecodeEnvelope(body []byte) Envelope {
	panic("not implemented")
}
