package redact

import (
	"strings"
	"testing"
)

func TestIBANChecksum(t *testing.T) {
	valid := []string{
		"DE89370400440532013000", "GB82WEST12345698765432", "FR1420041010050500013M02606",
		"NL91ABNA0417164300", "BE68539007547034", "CH9300762011623852957", "ES9121000418450200051332",
		"IT60X0542811101000000123456", "NO9386011117947", "AT611904300234573201", "PL61109010140000071219812874",
	}
	for _, s := range valid {
		if n := ibanLengths[s[:2]]; n != len(s) || !ibanChecksum([]byte(s)) {
			t.Errorf("%s: length %d (table %d), checksum %v; want a valid IBAN", s, len(s), n, ibanChecksum([]byte(s)))
		}
	}
	for _, s := range []string{"DE89370400440532013001", "GB82WEST12345698765431", "NL91ABNA0417164301"} {
		if ibanChecksum([]byte(s)) {
			t.Errorf("%s passes the checksum", s)
		}
	}
}

func TestFindIBANs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"pay to DE89 3704 0044 0532 0130 00.", []string{"DE89 3704 0044 0532 0130 00"}},
		{"DE89370400440532013000", []string{"DE89370400440532013000"}},
		{"iban=GB82WEST12345698765432&x=1", []string{"GB82WEST12345698765432"}},
		{"NO93 8601 1117 947 end", []string{"NO93 8601 1117 947"}},
		{"DE89 3704 0044 0532 0130 01", nil},      // checksum
		{"DE89 3704 0044 0532 0130 0012", nil},    // too long
		{"XDE89370400440532013000", nil},          // glued to a word
		{"DE89370400440532013000X", nil},          // an identifier
		{"DE89 37040044 0532 0130 00", nil},       // not in groups of four
		{"ZZ89370400440532013000", nil},           // no such country
		{"DE8937040044053201300", nil},            // one short
		{"ORD-2024-000123 DE12 version 1.2", nil}, // a head alone
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range findIBANs(tt.in) {
			got = append(got, tt.in[sp[0]:sp[1]])
		}
		if !equalStrings(got, tt.want) {
			t.Errorf("findIBANs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidSSN(t *testing.T) {
	for s, want := range map[string]bool{
		"123456789": true, "078051120": true, "000123456": false, "666123456": false, "900123456": false,
		"999123456": false, "123006789": false, "123450000": false, "12345678": false,
	} {
		if got := validSSN([]byte(s)); got != want {
			t.Errorf("validSSN(%s) = %v, want %v", s, got, want)
		}
	}
}

// Shapes the new detectors must find, and neighbours they must leave alone.
func TestRedactPersonalData(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"iban grouped", "IBAN DE89 3704 0044 0532 0130 00 for refund", "IBAN [REDACTED:iban ...3000] for refund"},
		{"iban whole", "to GB82WEST12345698765432", "to [REDACTED:iban ...5432]"},
		{"mistyped iban is not a card", "DE89 3704 0044 0532 0130 01", "DE89 3704 0044 0532 0130 01"},
		{"ssn", "ssn 123-45-6789 on file", "ssn [REDACTED:ssn] on file"},
		{"ssn area 666 is never issued", "ref 666-12-3456", "ref 666-12-3456"},
		{"ssn area 9xx is never issued", "ref 912-12-3456", "ref 912-12-3456"},
		{"ssn group 00", "ref 123-00-4567", "ref 123-00-4567"},
		{"ssn inside a longer number", "part 7-123-45-6789-01", "part 7-123-45-6789-01"},
		{"e.164", "sms to +4915112345678.", "sms to [REDACTED:phone]."},
		{"international, spaced", "+1 555 123 4567 and +44 20 7946 0958", "[REDACTED:phone] and [REDACTED:phone]"},
		{"international, trunk zero", "+49 (0)30 1234567", "[REDACTED:phone]"},
		{"north american", "(555) 123-4567 or 555-123-4567 or 1-555-123-4567", "[REDACTED:phone] or [REDACTED:phone] or [REDACTED:phone]"},
		{"north american with dots", "555.123.4567", "[REDACTED:phone]"},
		{"time zone offset", "2026-11-30T10:00:00+01:00 and +0100", "2026-11-30T10:00:00+01:00 and +0100"},
		{"signed amount", "delta +12345.67 EUR", "delta +12345.67 EUR"},
		{"area code 0 or 1", "ref 123-456-7890", "ref 123-456-7890"},
		{"ipv4", "10.200.300.4000 and 192.168.100.200", "10.200.300.4000 and 192.168.100.200"},
		{"national number without a key", "call 030 1234567", "call 030 1234567"},
		{"aws pair", "AKIA" + "IOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[REDACTED:aws-key] [REDACTED:aws-secret]"},
		{"aws secret named in text", "the AWS secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "the AWS secret is [REDACTED:aws-secret]"},
		// Alone it is no longer known for an AWS secret, but it looks random.
		{"40 base64 characters alone", "blob wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "blob [REDACTED:secret]"},
		{"a long camelCase name", "in OrderCreatedEventV2HandlerForEU1Region", "in OrderCreatedEventV2HandlerForEU1Region"},
		{"a URL path", "GET /api/v2/customers/884213/paymentMethods/default", "GET /api/v2/customers/884213/paymentMethods/default"},
		{"a base64 blob longer than a token", "img " + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", 5), "img " + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", 5)},
		{"git sha near the word secret", "secret rotated in 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", "secret rotated in 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := r.Text(tt.in); got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// Shapes that are secrets or personal data only under a key that says so,
// in key=value text, JSON and headers alike.
func TestRedactUnderKeys(t *testing.T) {
	tests := []struct{ key, value, want string }{
		{"phone", "030 1234567", "[REDACTED:phone]"},
		{"mobile_number", "0151/2345678", "[REDACTED:phone]"},
		{"tel", "+49 30 1234567", "[REDACTED:phone]"},
		{"phone_verified_at", "2026-11-30 10:00:00", "2026-11-30 10:00:00"},
		{"phone_verified_on", "2026-11-30", "2026-11-30"},
		{"phone_count", "3", "3"},
		{"order_number", "030 1234567", "030 1234567"},
		{"customer_ssn", "123456789", "[REDACTED:ssn]"},
		{"tax_id", "078051120", "[REDACTED:ssn]"},
		{"customer_ssn", "912345678", "912345678"},
		{"order_id", "123456789", "123456789"},
		{"aws_creds", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[REDACTED:aws-secret]"},
		{"signing_key_ref", "Zm9vYmFyQmF6MTIzNDU2Nzg5", "[REDACTED:secret]"},
		{"webhook_secret_name", "orders-webhook", "orders-webhook"},
		{"token_type", "Bearer", "Bearer"},
		{"tokenizer_version", "bpe-v2-2024.11.30", "bpe-v2-2024.11.30"},
		{"auth_hash", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "[REDACTED:secret]"},
		{"auth_request_id", "550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000"},
		{"note", "Zm9vYmFyQmF6MTIzNDU2Nzg5", "Zm9vYmFyQmF6MTIzNDU2Nzg5"},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			text := "x: 1\n" + tt.key + ": " + tt.value + "\ny: 2"
			if got, _ := r.Text(text); got != "x: 1\n"+tt.key+": "+tt.want+"\ny: 2" {
				t.Errorf("text %q: got %q", text, got)
			}
			quoted := `"` + tt.key + `"="` + tt.value + `" next=1`
			if got, _ := r.Text(quoted); got != `"`+tt.key+`"="`+tt.want+`" next=1` {
				t.Errorf("text %q: got %q", quoted, got)
			}
			doc := `{"` + tt.key + `":"` + strings.ReplaceAll(tt.value, `/`, `\/`) + `","list":1}`
			got, _, _, err := r.JSON([]byte(doc), 0)
			if want := "{\n  \"" + tt.key + "\": \"" + tt.want + "\",\n  \"list\": 1\n}"; err != nil || got != want {
				t.Errorf("JSON %s: got %q (%v), want %q", doc, got, err, want)
			}
			h, _ := Headers(headers{tt.key: tt.value, "nested": headers{tt.key: []any{tt.value}}}, r)
			if h[tt.key] != tt.want || h["nested"].(headers)[tt.key].([]any)[0] != tt.want {
				t.Errorf("Headers: got %q and %q, want %q in both", h[tt.key], h["nested"], tt.want)
			}
		})
	}
}

func TestRedactNumbersUnderKeys(t *testing.T) {
	r := New()
	got, n, _, err := r.JSON([]byte(`{"phone":4915112345678,"customer_ssn":123456789,"phones":[3012345678],"qty":123456789}`), 0)
	want := "{\n  \"phone\": \"[REDACTED:phone]\",\n  \"customer_ssn\": \"[REDACTED:ssn]\",\n  \"phones\": [\n    \"[REDACTED:phone]\"\n  ],\n  \"qty\": 123456789\n}"
	if err != nil || got != want || n != 3 {
		t.Errorf("got %q (%d, %v), want %q (3)", got, n, err, want)
	}
	h, n := Headers(headers{"x-phone": int64(4915112345678), "x-count": int64(4915112345678)}, r)
	if h["x-phone"] != "[REDACTED:phone]" || h["x-count"] != int64(4915112345678) || n != 1 {
		t.Errorf("headers: got %#v (%d)", h, n)
	}
}

func TestKeyedRulesSkipBinaryAndPlainText(t *testing.T) {
	r := New()
	if hidden, n := r.HiddenBytes([]byte("\x00\x01 order 123456789 030 1234567")); hidden != nil || n != 0 {
		t.Errorf("HiddenBytes hid %d secrets in a body with no keys", n)
	}
}
