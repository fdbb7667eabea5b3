package triage

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
