package triage

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func zlibbed(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func rawDeflated(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.BestCompression)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

const addressInvalid = `{"message_id":"m-17","event_type":"order.placed","failure":{"reason_code":"ADDRESS_INVALID","attempt":2},"data":{"tenant":"acme","note":"cust-4711 moved"}}`

func TestDecodeBody(t *testing.T) {
	plain := []byte(addressInvalid)
	gz := gzipped(t, plain)
	corrupt := append([]byte{}, gz...)
	corrupt = corrupt[:len(corrupt)-12] // cut into the deflate stream and the trailer
	badSum := append([]byte{}, gz...)
	badSum[len(badSum)-8] ^= 0xff // the CRC-32 of the trailer
	tests := []struct {
		name     string
		body     []byte
		encoding string
		want     string // the decoded body; "" means the raw body comes back
		decoding *BodyDecoding
	}{
		{"no encoding", plain, "", "", nil},
		{"a charset in content_encoding is not an encoding", plain, "UTF-8", "", nil},
		{"identity", plain, "identity", "", nil},
		{"an encoding dlqt does not read", plain, "br", "", nil},
		{"gzip", gz, "gzip", addressInvalid, &BodyDecoding{Encoding: "gzip", EncodedBytes: len(gz), DecodedBytes: len(plain)}},
		{"x-gzip, any case, spaces", gz, " X-GZIP ", addressInvalid, &BodyDecoding{Encoding: "x-gzip", EncodedBytes: len(gz), DecodedBytes: len(plain)}},
		{"deflate in zlib framing", zlibbed(t, plain), "deflate", addressInvalid, &BodyDecoding{Encoding: "deflate", EncodedBytes: len(zlibbed(t, plain)), DecodedBytes: len(plain)}},
		{"raw deflate", rawDeflated(t, plain), "deflate", addressInvalid, &BodyDecoding{Encoding: "deflate", EncodedBytes: len(rawDeflated(t, plain)), DecodedBytes: len(plain)}},
		{"empty gzip body", nil, "gzip", "", nil},
		{"not gzip at all", plain, "gzip", "", &BodyDecoding{Encoding: "gzip", EncodedBytes: len(plain), Error: "not gzip data (gzip: invalid header)"}},
		{"cut short", corrupt, "gzip", "", &BodyDecoding{Encoding: "gzip", EncodedBytes: len(corrupt), Error: "corrupt: unexpected EOF"}},
		{"bad checksum", badSum, "gzip", "", &BodyDecoding{Encoding: "gzip", EncodedBytes: len(badSum), Error: "corrupt: gzip: invalid checksum"}},
		{"deflate garbage", []byte("\xff\xff\xff\xff not deflate"), "deflate", "", &BodyDecoding{Encoding: "deflate", EncodedBytes: 16, Error: "corrupt: flate: corrupt input before offset 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, d := DecodeBody(tt.body, tt.encoding)
			want := tt.body
			if tt.want != "" {
				want = []byte(tt.want)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("body = %q, want %q", abbrev(string(got)), abbrev(string(want)))
			}
			switch {
			case (d == nil) != (tt.decoding == nil):
				t.Fatalf("decoding = %+v, want %+v", d, tt.decoding)
			case d != nil && *d != *tt.decoding:
				t.Errorf("decoding = %+v, want %+v", *d, *tt.decoding)
			}
		})
	}
}

// A decompression bomb stops at MaxDecodedBody and says so: 64 MiB of
// zeros compress to about 64 KiB.
func TestDecodeBodyBomb(t *testing.T) {
	bomb := gzipped(t, make([]byte, 64<<20))
	got, d := DecodeBody(bomb, "gzip")
	if len(got) != MaxDecodedBody {
		t.Errorf("decoded %d bytes, want the limit %d", len(got), MaxDecodedBody)
	}
	if d == nil || !d.Truncated || d.DecodedBytes != MaxDecodedBody || d.Error != "" {
		t.Fatalf("decoding = %+v, want truncated at the limit", d)
	}
	if s := d.String(); !strings.Contains(s, "stopped at the 4 MiB limit") {
		t.Errorf("String() = %q, does not say it stopped", s)
	}
}

func TestBodyDecodingString(t *testing.T) {
	tests := []struct {
		d    BodyDecoding
		want string
	}{
		{BodyDecoding{Encoding: "gzip", EncodedBytes: 597, DecodedBytes: 2310}, "gzip, 597 → 2,310 bytes"},
		{BodyDecoding{Encoding: "deflate", EncodedBytes: 4096, DecodedBytes: MaxDecodedBody, Truncated: true}, "deflate, 4,096 → 4,194,304+ bytes, stopped at the 4 MiB limit"},
		{BodyDecoding{Encoding: "gzip", EncodedBytes: 20, Error: "corrupt: unexpected EOF"}, "gzip, 20 bytes, not decoded: corrupt: unexpected EOF; raw bytes shown"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// The envelope, the payload and the reason code are read through the
// encoding: a gzip ADDRESS_INVALID envelope groups with the plain ones.
func TestAnalyzeDecodesContentEncoding(t *testing.T) {
	plain := Message{Queue: "orders.dlq", Body: []byte(addressInvalid), Properties: Properties{ContentType: "application/json"}}
	gz := plain
	gz.Body = gzipped(t, []byte(strings.Replace(addressInvalid, "m-17", "m-18", 1)))
	gz.Properties.ContentEncoding = "gzip"
	got := Analyze(Batch{Messages: []Message{plain, gz}}, Topology{}, nil)
	if got[1].ReasonCode != "ADDRESS_INVALID" || got[1].Envelope.EventType != "order.placed" {
		t.Fatalf("gzip message: reason_code %q, event type %q; want ADDRESS_INVALID, order.placed", got[1].ReasonCode, got[1].Envelope.EventType)
	}
	if got[1].Binary || !strings.Contains(got[1].Payload, `"reason_code": "ADDRESS_INVALID"`) {
		t.Errorf("payload not decoded: %q", abbrev(got[1].Payload))
	}
	if d := got[1].Decoding; d == nil || d.Encoding != "gzip" || d.DecodedBytes != len(addressInvalid) {
		t.Errorf("decoding = %+v", d)
	}
	if got[1].PayloadBytes != len(gz.Body) {
		t.Errorf("payload_bytes = %d, want the bytes on the wire %d", got[1].PayloadBytes, len(gz.Body))
	}
	if string(got[1].Message.Body) != string(gz.Body) || got[1].Message.Properties.ContentEncoding != "gzip" {
		t.Error("the message itself must stay as it was read (replay publishes it unchanged)")
	}
	groups := GroupMessages(got)
	if len(groups) != 1 || groups[0].Count != 2 {
		t.Errorf("groups = %+v, want one ADDRESS_INVALID group of 2", groups)
	}
	if env := EnvelopeOf(gz); env.MessageID != "m-18" {
		t.Errorf("EnvelopeOf = %+v", env)
	}
}

// A corrupt body is shown raw, as hex, with the reason beside it.
func TestAnalyzeCorruptEncodingShowsRawBytes(t *testing.T) {
	m := Message{Queue: "q", Body: []byte("\x1f\x8b\x08\x00garbage"), Properties: Properties{ContentEncoding: "gzip"}}
	got := Analyze(Batch{Messages: []Message{m}}, Topology{}, nil)[0]
	if !got.Binary || !strings.Contains(got.Payload, "1f 8b") {
		t.Errorf("payload = %q, want the raw bytes as hex", got.Payload)
	}
	if got.Decoding == nil || got.Decoding.Error == "" {
		t.Errorf("decoding = %+v, want the reason", got.Decoding)
	}
}

func FuzzDecodeBody(f *testing.F) {
	f.Add(gzipped(f, []byte(addressInvalid)), "gzip")
	f.Add(zlibbed(f, []byte(addressInvalid)), "deflate")
	f.Add(rawDeflated(f, []byte(addressInvalid)), "deflate")
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"), "x-gzip")
	f.Add([]byte("plain"), "")
	f.Fuzz(func(t *testing.T, body []byte, encoding string) {
		orig := append([]byte{}, body...)
		got, d := DecodeBody(body, encoding)
		if !bytes.Equal(body, orig) {
			t.Fatal("DecodeBody changed its input")
		}
		if len(got) > MaxDecodedBody {
			t.Fatalf("decoded %d bytes, over the limit", len(got))
		}
		if d == nil || d.Error != "" {
			if !bytes.Equal(got, body) {
				t.Fatal("an undecoded body must come back as it was")
			}
		}
		if d != nil {
			if d.EncodedBytes != len(body) || (d.Error == "" && d.DecodedBytes != len(got)) {
				t.Fatalf("decoding %+v does not describe %d → %d bytes", *d, len(body), len(got))
			}
			if r, bad := unsafeText(d.String()); bad {
				t.Fatalf("unsafe rune %U in %q", r, d.String())
			}
			if d.Error == "" && !d.Truncated && len(got) > 0 {
				again, d2 := DecodeBody(EncodeBody(got, encoding), encoding)
				if d2 == nil || d2.Error != "" || !bytes.Equal(again, got) {
					t.Fatalf("EncodeBody does not read back: %+v", d2)
				}
			}
		}
		_ = RenderMessage(Message{Body: body, Properties: Properties{ContentEncoding: encoding}}, nil)
	})
}

// BenchmarkAnalyzeGzip is BenchmarkAnalyze's batch sent gzip-compressed:
// the cost of reading every body through its encoding (twice: envelope,
// then payload).
func BenchmarkAnalyzeGzip(b *testing.B) {
	batch := syntheticBatch(10000)
	for i := range batch.Messages {
		batch.Messages[i].Body = gzipped(b, batch.Messages[i].Body)
		batch.Messages[i].Properties.ContentEncoding = "gzip"
	}
	top := seed002Topology()
	red := redact.New()
	b.ReportAllocs()
	for b.Loop() {
		ts := Analyze(batch, top, red)
		if ts[0].Decoding == nil || ts[0].ReasonCode == "" {
			b.Fatal("not decoded")
		}
	}
}
