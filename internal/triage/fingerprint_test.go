package triage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// faultSample is one message's headers as a framework parks it
// (testdata/faults/headers.json; a value "@file" is that file's text).
type faultSample struct {
	Name    string  `json:"name"`
	Headers Headers `json:"headers"`
}

func faultSamples(t *testing.T) []faultSample {
	t.Helper()
	var samples []faultSample
	if err := json.Unmarshal([]byte(readFault(t, "headers.json")), &samples); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		for k, v := range s.Headers {
			if str, ok := v.(string); ok && strings.HasPrefix(str, "@") {
				s.Headers[k] = readFault(t, str[1:])
			}
		}
	}
	return samples
}

// springHeaders are what Spring AMQP's RepublishMessageRecoverer adds.
func springHeaders(trace, message string) Headers {
	return Headers{
		"x-exception-stacktrace": trace, "x-exception-message": message,
		"x-original-exchange": "inventory", "x-original-routingKey": "inventory.reserve",
	}
}

// A parking queue of Spring, MassTransit, NServiceBus, Celery and plain
// x-error failures groups by root cause and where it was thrown: not by
// Spring's wrapper, and not apart for another line or another message.
func TestFingerprintGroupsByRootCauseAndWhere(t *testing.T) {
	npe := readFault(t, "spring-npe.txt")
	var msgs []Message
	for _, s := range faultSamples(t) {
		msgs = append(msgs, Message{Headers: s.Headers})
	}
	msgs = append(msgs,
		// The same failure after a redeploy moved the line, with another message.
		Message{Headers: springHeaders(strings.Replace(strings.Replace(npe, "InventoryService.java:88", "InventoryService.java:91", 1),
			`"line.sku" is null`, `"order.lines[3].sku" is null`, 1), "other text")},
		// An application's own code wins over any trace.
		Message{Headers: Headers{"x-reason-code": "sku_unknown", "x-exception-stacktrace": npe}},
	)
	for i := range msgs {
		msgs[i].Queue = "inventory.dlq"
	}
	ts := Analyze(Batch{Queue: "inventory.dlq", Messages: msgs}, Topology{}, redact.New())
	type shown struct{ code, typ, at, label string }
	want := map[string]shown{
		"NullPointerException @ InventoryService.reserve": {typ: "java.lang.NullPointerException",
			at: "com.acme.inventory.InventoryService.reserve:88", label: "NullPointerException @ InventoryService.reserve:88"},
		"JsonParseException @ InventoryService.reserve": {typ: "com.fasterxml.jackson.core.JsonParseException",
			at: "com.acme.inventory.InventoryService.reserve:88", label: "JsonParseException @ InventoryService.reserve:88"},
		"HttpRequestException @ PspClient.ChargeAsync": {typ: "System.Net.Http.HttpRequestException",
			at: "Billing.Gateway.PspClient.ChargeAsync:57", label: "HttpRequestException @ PspClient.ChargeAsync:57"},
		"SqlException @ OrderRepository.MarkShippedAsync": {typ: "Microsoft.Data.SqlClient.SqlException",
			at: "Sales.Data.OrderRepository.MarkShippedAsync:112", label: "SqlException @ OrderRepository.MarkShippedAsync:112"},
		"KeyError @ carrier.quote":                     {typ: "KeyError", at: "app.shipping.carrier.quote:118", label: "KeyError @ carrier.quote:118"},
		"upstream timeout after <n> ms for order <id>": {label: "upstream timeout after <n> ms for order <id>"},
		"panic @ post.(*Poster).Post":                  {typ: "panic", at: "github.com/acme/ledger/internal/post.(*Poster).Post:88", label: "panic @ post.(*Poster).Post:88"},
		"sku_unknown":                                  {label: "sku_unknown"},
	}
	counts := map[string]int{"NullPointerException @ InventoryService.reserve": 2, "upstream timeout after <n> ms for order <id>": 2}
	groups := GroupMessages(ts)
	if len(groups) != len(want) {
		for _, g := range groups {
			t.Logf("group %q ×%d", g.ReasonCode, g.Count)
		}
		t.Fatalf("%d groups, want %d", len(groups), len(want))
	}
	for _, g := range groups {
		w, ok := want[g.ReasonCode]
		if !ok {
			t.Errorf("unexpected group %q", g.ReasonCode)
			continue
		}
		got := shown{typ: g.ExceptionType, at: g.ThrownAt, label: FaultLabel(g.ReasonCode, g.ThrownAt)}
		w.code = ""
		if got != w {
			t.Errorf("group %q = %+v, want %+v", g.ReasonCode, got, w)
		}
		if n := max(counts[g.ReasonCode], 1); g.Count != n {
			t.Errorf("group %q has %d messages, want %d", g.ReasonCode, g.Count, n)
		}
		// What a screen or the JSON shows of it goes through the real
		// redactor: the label must survive it (its " @ " is no e-mail).
		red := redact.New()
		for _, s := range []string{FaultLabel(g.ReasonCode, g.ThrownAt), g.ThrownAt, g.ExceptionType} {
			if shownText, n := ShownLine(red, s); shownText != s || n != 0 {
				t.Errorf("redacted %q to %q", s, shownText)
			}
		}
	}
	if moved := ts[len(ts)-2]; moved.ThrownAt != "com.acme.inventory.InventoryService.reserve:91" {
		t.Errorf("a message keeps its own line: %q", moved.ThrownAt)
	}
}

// The operator's app_frames (Topology.AppFrames from the config) say which
// frames are theirs: a handler glob moves "where" from the repository.
func TestFingerprintAppFrames(t *testing.T) {
	m := Message{Queue: "error", Headers: Headers{"NServiceBus.ExceptionInfo.StackTrace": readFault(t, "nservicebus.txt")}}
	ts := Analyze(Batch{Queue: "error", Messages: []Message{m}}, Topology{AppFrames: []string{"Sales.Handlers.*"}}, nil)
	if ts[0].ReasonCode != "SqlException @ ShipOrderHandler.Handle" || ts[0].ThrownAt != "Sales.Handlers.ShipOrderHandler.Handle:29" {
		t.Fatalf("code %q at %q", ts[0].ReasonCode, ts[0].ThrownAt)
	}
}

func TestNormaliseFaultText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"upstream timeout after 3000 ms", "upstream timeout after <n> ms"},
		{"order 7f3c2a9e-1b44-4d0a-9c55-2f9e1d7a0b13 not found", "order <id> not found"},
		{`customer 'cus_4402' does not exist`, `customer '…' does not exist`},
		{`field "sku" missing at offset 17`, `field "…" missing at offset <n>`},
		{"token 9f86d081884c7d65 and face", "token <id> and face"},
		{"customer cus_4402 is closed", "customer <id> is closed"},
		{"v2 of schema", "v2 of schema"},
	}
	for _, tt := range tests {
		if got := NormaliseFaultText(tt.in); got != tt.want {
			t.Errorf("NormaliseFaultText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
