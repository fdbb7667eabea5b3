package redact

import "testing"

func TestValidCard(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"4111111111111111", true},    // Visa test number
		{"4111 1111 1111 1111", true}, // spaces
		{"4111-1111-1111-1111", true}, // dashes
		{"5555555555554444", true},    // Mastercard
		{"2223003122003222", true},    // Mastercard 2-series
		{"378282246310005", true},     // Amex, 15 digits
		{"6011111111111117", true},    // Discover
		{"3530111333300000", true},    // JCB
		{"4222222222222", true},       // Visa, 13 digits
		{"6200000000000000000", true}, // UnionPay, 19 digits
		{"4111111111111112", false},   // Luhn fails
		{"5555555555554440", false},   // Luhn fails
		{"1732972800123", false},      // epoch ms, first digit 1
		{"7000000000000005", false},   // Luhn passes, not a card network
		{"411111111111", false},       // 12 digits
		{"41111111111111111113", false},
		{"4111x1111111111111", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := validCard(tt.in); got != tt.want {
			t.Errorf("validCard(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if !luhn([]byte("7000000000000005")) {
		t.Error("luhn rejects 7000000000000005, so the network test above proves nothing")
	}
}

func TestFindCards(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"4111111111111111", []string{"4111111111111111"}},
		{"card 4111 1111 1111 1111.", []string{"4111 1111 1111 1111"}},
		{"0 4111 1111 1111 1111 0", []string{"4111 1111 1111 1111"}},  // groups around it
		{"4111-1111-1111-1111 2024", []string{"4111-1111-1111-1111"}}, // a year after it
		{"4111111111111111 5555555555554444", []string{"4111111111111111", "5555555555554444"}},
		{"x4111111111111111", nil},       // glued to a word
		{"4111111111111111abc", nil},     // an identifier
		{"94111111111111111", nil},       // never from the middle of a group
		{"4111  1111 1111 1111", nil},    // two spaces end the run: 4 + 12 digits
		{"4111111111111112", nil},        // Luhn fails
		{"2026-11-30 10:00:00", nil},     // a date
		{"12345678901234567890123", nil}, // too long
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range findCards(tt.in) {
			got = append(got, tt.in[sp[0]:sp[1]])
		}
		if !equalStrings(got, tt.want) {
			t.Errorf("findCards(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
