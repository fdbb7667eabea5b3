// Package redacttest holds fake secrets of the shapes the default rules
// find, for tests of redaction and of what reaches a screen. None is real:
// some are split so no scanner mistakes this file for a leak.
package redacttest

const (
	JWT    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	PEM    = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1c2J0ZXN0a2V5\nbm90cmVhbA==\n-----END RSA PRIVATE KEY-----"
	GitHub = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	Slack  = "xoxb-" + "123456789012-abcdefghijkl"
	Google = "AIza" + "SyD-1234567890abcdefghijklmnopqrstu"
	Stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	AWSKey = "AKIA" + "IOSFODNN7EXAMPLE"
	Basic  = "dXNlcjpodW50ZXIy" // user:hunter2
	Opaque = "mF_9.B5f-4.1JqM8xZ2kLpQrStUv"
	// Visa is a test card number with a valid Luhn digit, as people write it.
	Visa    = "4111 1111 1111 1111"
	VisaRaw = "4111111111111111"
)
