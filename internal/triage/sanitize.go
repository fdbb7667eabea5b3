package triage

// Sanitize removes everything that could drive a terminal from broker text,
// keeping newlines and tabs.
func Sanitize(s string) string { panic("not implemented") }

// SanitizeLine is Sanitize for one-line fields (names, header values).
func SanitizeLine(s string) string { panic("not implemented") }
