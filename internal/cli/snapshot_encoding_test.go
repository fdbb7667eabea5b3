package cli

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// A redacted snapshot must not carry a secret inside a compressed body:
// the body is decoded, redacted and encoded again the same way, so the
// snapshot still reads as the queue did (gzip, decoded on the page).
func TestRedactSnapshotMasksInsideCompressedBodies(t *testing.T) {
	secret := `{"user":"ana","password":"hunter2-secret"}`
	var gz, zl bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(secret))
	w.Close()
	z := zlib.NewWriter(&zl)
	z.Write([]byte(secret))
	z.Close()
	in := broker.SnapshotFile{Batches: []triage.Batch{{Queue: "q", Messages: []triage.Message{
		{Body: gz.Bytes(), Properties: triage.Properties{ContentType: "application/json", ContentEncoding: "gzip"}},
		{Body: zl.Bytes(), Properties: triage.Properties{ContentType: "application/json", ContentEncoding: "deflate"}},
	}}}}
	out, n := redactSnapshot(in, redact.New())
	if n != 2 {
		t.Errorf("%d values masked, want 2", n)
	}
	for i, m := range out.Batches[0].Messages {
		decoded, d := triage.DecodeBody(m.Body, m.Properties.ContentEncoding)
		if d == nil || d.Error != "" {
			t.Fatalf("message %d: not %s any more: %+v", i, m.Properties.ContentEncoding, d)
		}
		if strings.Contains(string(decoded), "hunter2") || !strings.Contains(string(decoded), `"user"`) {
			t.Errorf("message %d: %s", i, decoded)
		}
	}
	r, _ := gzip.NewReader(bytes.NewReader(in.Batches[0].Messages[0].Body))
	if orig, _ := io.ReadAll(r); string(orig) != secret {
		t.Error("the input was changed")
	}
}
