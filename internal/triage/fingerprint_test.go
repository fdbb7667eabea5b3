package triage

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

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
	conv := readFault(t, "spring-conversion.txt")
	nsb := readFault(t, "nservicebus.txt")
	msgs := []Message{
		{Headers: springHeaders(npe, `Cannot invoke "Sku.code()"`)},
		// The same failure after a redeploy moved the line, with another message.
		{Headers: springHeaders(strings.Replace(strings.Replace(npe, "InventoryService.java:88", "InventoryService.java:91", 1),
			`"line.sku" is null`, `"order.lines[3].sku" is null`, 1), "other text")},
		{Headers: springHeaders(conv, "Failed to convert message")},
		{Headers: Headers{
			"MT-Fault-ExceptionType": "System.Net.Http.HttpRequestException", "MT-Fault-Message": "Response status code does not indicate success: 502 (Bad Gateway).",
			"MT-Fault-StackTrace": readFault(t, "masstransit.txt"), "MT-Reason": "fault",
		}},
		{Headers: Headers{
			"NServiceBus.ExceptionInfo.ExceptionType": "System.InvalidOperationException", "NServiceBus.ExceptionInfo.InnerExceptionType": "Microsoft.Data.SqlClient.SqlException",
			"NServiceBus.ExceptionInfo.Message": "Order 7f3c2a9e could not be marked shipped", "NServiceBus.ExceptionInfo.StackTrace": nsb,
			"NServiceBus.FailedQ": "sales", "NServiceBus.TimeOfFailure": "2026-11-30 09:00:00:123456 Z",
		}},
		{Headers: Headers{"task": "shipping.tasks.book_label", "id": "b5d0c3c6-52b4-4e1f-8f0e-61a9e8f1c001", "retries": int64(3), "x-exception": readFault(t, "celery.txt")}},
		{Headers: Headers{"x-error": "upstream timeout after 3000 ms for order 7f3c2a9e-1b44-4d0a-9c55-2f9e1d7a0b13"}},
		{Headers: Headers{"x-error": "upstream timeout after 2500 ms for order 0b6e1f2a-0000-4d0a-9c55-2f9e1d7a0b14"}},
		{Headers: Headers{"x-exception": readFault(t, "gopanic.txt")}},
		// An application's own code wins over any trace.
		{Headers: Headers{"x-reason-code": "sku_unknown", "x-exception-stacktrace": npe}},
	}
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
	if ts[1].ThrownAt != "com.acme.inventory.InventoryService.reserve:91" {
		t.Errorf("a message keeps its own line: %q", ts[1].ThrownAt)
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
