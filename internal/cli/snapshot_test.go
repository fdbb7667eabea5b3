package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

func TestRedactSnapshotMasksBodiesAndHeadersAndKeepsJSON(t *testing.T) {
	in := broker.SnapshotFile{Batches: []triage.Batch{{Queue: "q", Messages: []triage.Message{
		{Body: []byte(`{"user":"ana","password":"hunter2-secret"}`), Properties: triage.Properties{ContentType: "application/json"},
			Headers: triage.Headers{"authorization": "Bearer abc.def.ghi"}},
		{Body: []byte("db user=svc password=hunter2-secret")},
	}}}}
	out, n := redactSnapshot(in, redact.New())
	if !out.Redacted || n < 3 {
		t.Errorf("redacted %v, %d masked; want true and at least 3", out.Redacted, n)
	}
	for _, m := range out.Batches[0].Messages {
		if strings.Contains(string(m.Body), "hunter2") {
			t.Errorf("body kept the secret: %s", m.Body)
		}
	}
	if !json.Valid(out.Batches[0].Messages[0].Body) {
		t.Errorf("a JSON body is no longer JSON: %s", out.Batches[0].Messages[0].Body)
	}
	if h := out.Batches[0].Messages[0].Headers["authorization"]; h == "Bearer abc.def.ghi" {
		t.Errorf("header kept: %v", h)
	}
	if string(in.Batches[0].Messages[1].Body) != "db user=svc password=hunter2-secret" {
		t.Errorf("the input was changed")
	}
}
