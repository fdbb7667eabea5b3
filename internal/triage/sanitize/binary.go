package sanitize

import (
	"mime"
	"strings"
	"unicode/utf8"
)

// sniffBytes bounds how much of a body IsBinary reads: a hostile body must
// not cost unbounded time, and 256 KiB is as much text as a payload shows.
const sniffBytes = 256 << 10

// IsBinary decides between text and a hex dump: invalid UTF-8, more than a
// few control bytes, or a content type that names a binary format. ESC is not
// counted: coloured log lines are text, and their escapes are shown escaped.
func IsBinary(body []byte, contentType string) bool {
	if binaryContentType(contentType) {
		return true
	}
	sample := body
	if len(sample) > sniffBytes {
		sample = TrimPartialRune(sample[:sniffBytes])
	}
	if !utf8.Valid(sample) {
		return true
	}
	controls := 0
	for _, c := range sample {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b) || c == 0x7f {
			controls++
		}
	}
	return controls > 1+len(sample)/100
}

// binaryContentType reports content types whose bodies are binary even when
// they happen to be valid UTF-8. application/octet-stream is not one of them:
// publishers use it for JSON often enough that the bytes decide.
func binaryContentType(ct string) bool {
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(ct))
	}
	switch {
	case strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"):
		return true
	}
	for _, f := range []string{"protobuf", "avro", "msgpack", "cbor", "thrift", "zip", "gzip", "pdf"} {
		if strings.Contains(mt, f) {
			return true
		}
	}
	return false
}

// TrimPartialRune drops an incomplete UTF-8 sequence cut off at the end, so
// a body cut at a byte bound still ends in whole characters.
func TrimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
