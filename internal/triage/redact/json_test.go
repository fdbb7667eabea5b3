package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
)

func TestRedactJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		n              int
	}{
		{
			name: "secret key at depth 1, order and numbers kept",
			in:   `{"z":1,"password":"hunter2","a":1.50,"big":12345678901234567890,"e":1e3}`,
			want: "{\n  \"z\": 1,\n  \"password\": \"[REDACTED]\",\n  \"a\": 1.50,\n  \"big\": 12345678901234567890,\n  \"e\": 1e3\n}",
			n:    1,
		},
		{
			name: "secret key deep, subtree masked whole",
			in:   `{"order":{"payment":{"card":{"number":"4111111111111111","exp":"12/29"},"amount":10}}}`,
			want: "{\n  \"order\": {\n    \"payment\": {\n      \"card\": \"[REDACTED]\",\n      \"amount\": 10\n    }\n  }\n}",
			n:    1,
		},
		{
			name: "secrets in arrays of objects",
			in:   `[{"user":"a","token":"t1"},{"user":"b","token":"t2"}]`,
			want: "[\n  {\n    \"user\": \"a\",\n    \"token\": \"[REDACTED]\"\n  },\n  {\n    \"user\": \"b\",\n    \"token\": \"[REDACTED]\"\n  }\n]",
			n:    2,
		},
		{
			name: "shapes in values under harmless keys",
			in:   `{"note":"Bearer ` + redacttest.JWT + `","contact":["jane@example.com"],"dsn":"amqp://u:p4ss@h/"}`,
			want: "{\n  \"note\": \"Bearer [REDACTED:jwt]\",\n  \"contact\": [\n    \"j***@example.com\"\n  ],\n  \"dsn\": \"amqp://u:[REDACTED:password]@h/\"\n}",
			n:    3,
		},
		{
			name: "card number sent as a JSON number",
			in:   `{"ref":4111111111111111,"ts":1732972800123}`,
			want: "{\n  \"ref\": \"[REDACTED:card ...1111]\",\n  \"ts\": 1732972800123\n}",
			n:    1,
		},
		{
			name: "JSON serialised inside a string",
			in:   `{"raw":"{\"password\":\"hunter2\"}"}`,
			want: "{\n  \"raw\": \"{\\\"password\\\":\\\"[REDACTED]\\\"}\"\n}",
			n:    1,
		},
		{
			name: "null, booleans and empty strings of secret keys stay",
			in:   `{"password":null,"token":"","password_set":true}`,
			want: "{\n  \"password\": null,\n  \"token\": \"\",\n  \"password_set\": true\n}",
			n:    0,
		},
		{
			name: "empty containers, duplicate keys, scalars",
			in:   `{"a":{},"b":[],"a":"x","c":[true,false,null]}`,
			want: "{\n  \"a\": {},\n  \"b\": [],\n  \"a\": \"x\",\n  \"c\": [\n    true,\n    false,\n    null\n  ]\n}",
			n:    0,
		},
		{
			name: "shapes deep in nested arrays",
			in:   `{"a":[[{"b":{"c":["` + redacttest.GitHub + `",4111111111111111]}}]]}`,
			want: "{\n  \"a\": [\n    [\n      {\n        \"b\": {\n          \"c\": [\n            \"[REDACTED:github-token]\",\n            \"[REDACTED:card ...1111]\"\n          ]\n        }\n      }\n    ]\n  ]\n}",
			n:    2,
		},
		{
			name: "private key block in a string with escaped newlines",
			in:   `{"note":"` + strings.ReplaceAll(redacttest.PEM, "\n", `\n`) + `","ok":1}`,
			want: "{\n  \"note\": \"[REDACTED:private-key]\",\n  \"ok\": 1\n}",
			n:    1,
		},
		{
			name: "secret shapes used as keys",
			in:   `{"jane@example.com":{"orders":2},"` + redacttest.AWSKey + `":true}`,
			want: "{\n  \"j***@example.com\": {\n    \"orders\": 2\n  },\n  \"[REDACTED:aws-key]\": true\n}",
			n:    2,
		},
		{
			name: "top-level string",
			in:   `"password=hunter2"`,
			want: `"password=[REDACTED]"`,
			n:    1,
		},
		{
			name: "controls, bidi and HTML characters in strings",
			in:   `{"k\u001b":"a\u001b[2J\u202e<b>&\u007f\u0085"}`,
			want: "{\n  \"k\\u001b\": \"a\\u001b[2J\\u202e<b>&\\u007f\\u0085\"\n}",
			n:    0,
		},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, unread, err := r.JSON([]byte(tt.in), 0)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || n != tt.n || unread != 0 {
				t.Errorf("JSON(%s)\n got %s (%d, unread %d)\nwant %s (%d)", tt.in, got, n, unread, tt.want, tt.n)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("output is not valid JSON: %s", got)
			}
		})
	}
}

// The pretty-printing itself must agree with encoding/json's indentation.
func TestRedactJSONMatchesIndent(t *testing.T) {
	in := `{"b":[1,2,{"c":"d"}],"a":{"x":[]},"n":-0.5e-3}`
	got, _, _, err := (*Redactor)(nil).JSON([]byte(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got, want.String())
	}
}

func TestRedactJSONStopsAtBound(t *testing.T) {
	in := "[" + strings.Repeat(`"aaaaaaaaaa",`, 1000) + `"end"]`
	got, _, unread, err := (*Redactor)(nil).JSON([]byte(in), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 1100 || unread <= 0 || unread >= len(in) {
		t.Errorf("bound not honoured: %d bytes out, %d unread of %d", len(got), unread, len(in))
	}
}
