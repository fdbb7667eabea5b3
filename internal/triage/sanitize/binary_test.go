package sanitize

import "testing"

func TestIsBinary(t *testing.T) {
	tests := []struct {
		name string
		body string
		ct   string
		want bool
	}{
		{"json", `{"a":1}`, "application/json", false},
		{"json as octet-stream", `{"a":1}`, "application/octet-stream", false},
		{"coloured log line", "\x1b[31mERROR\x1b[0m failed\n", "", false},
		{"one stray control", "hello\x07world", "", false},
		{"invalid utf-8", "ab\xffcd", "", true},
		{"many controls", "\x08\x01\x12\x03abc", "", true},
		{"protobuf content type", "\nhello", "application/x-protobuf", true},
		{"image", "GIF89a", "image/gif", true},
		{"content type with parameters", "plain", "text/plain; charset=utf-8", false},
	}
	for _, tt := range tests {
		if got := IsBinary([]byte(tt.body), tt.ct); got != tt.want {
			t.Errorf("%s: IsBinary = %v, want %v", tt.name, got, tt.want)
		}
	}
}
