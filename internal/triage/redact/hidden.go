package redact

// HiddenBytes marks the bytes of b that a value rule of r would mask, so a
// token or card number embedded in a binary body is hidden in its dump. It
// returns the marks (nil when nothing is hidden) and how many secrets it found.
func (r *Redactor) HiddenBytes(b []byte) ([]bool, int) {
	if r == nil {
		return nil, 0
	}
	var hidden []bool
	n := 0
	text := string(b)
	for i := range r.values {
		if r.values[i].Under != nil {
			continue // a binary body has no keys to go by
		}
		for _, sp := range r.values[i].spans(text) {
			if hidden == nil {
				hidden = make([]bool, len(b))
			}
			for j := sp[0]; j < sp[1]; j++ {
				hidden[j] = true
			}
			n++
		}
	}
	return hidden, n
}
