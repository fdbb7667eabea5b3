package triage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readFault(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "faults", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each real-looking trace's chain, root cause and first application frame.
func TestParseStackTrace(t *testing.T) {
	tests := []struct {
		file      string
		causes    []string // types, outermost first
		rootMsg   string
		app       string // first application frame, with its line
		appFrames []string
	}{
		{"spring-npe.txt", []string{"org.springframework.amqp.rabbit.support.ListenerExecutionFailedException", "java.lang.NullPointerException"},
			`Cannot invoke "com.acme.inventory.Sku.code()" because "line.sku" is null`, "com.acme.inventory.InventoryService.reserve:88", nil},
		{"spring-conversion.txt", []string{"org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
			"org.springframework.amqp.support.converter.MessageConversionException", "com.fasterxml.jackson.core.JsonParseException"},
			"Unexpected character ('}' (code 125)): was expecting double-quote to start field name", "com.acme.inventory.InventoryService.reserve:88", nil},
		{"masstransit.txt", []string{""}, "", "Billing.Gateway.PspClient.ChargeAsync:57", nil},
		{"nservicebus.txt", []string{"System.InvalidOperationException", "Microsoft.Data.SqlClient.SqlException"},
			"Timeout expired.  The timeout period elapsed prior to completion of the operation or the server is not responding.",
			"Sales.Data.OrderRepository.MarkShippedAsync:112", nil},
		{"celery.txt", []string{"shipping.errors.LabelError", "KeyError"}, "'rates'", "app.shipping.carrier.quote:118", nil},
		{"gopanic.txt", []string{"panic"}, "runtime error: invalid memory address or nil pointer dereference",
			"github.com/acme/ledger/internal/post.(*Poster).Post:88", nil},
		// app_frames win: the handler, not the repository, is "ours".
		{"nservicebus.txt", []string{"System.InvalidOperationException", "Microsoft.Data.SqlClient.SqlException"},
			"Timeout expired.  The timeout period elapsed prior to completion of the operation or the server is not responding.",
			"Sales.Handlers.ShipOrderHandler.Handle:29", []string{"Sales.Handlers.*"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			st := ParseStackTrace(readFault(t, tt.file))
			var types []string
			for _, c := range st.Causes {
				types = append(types, c.Type)
			}
			if strings.Join(types, "|") != strings.Join(tt.causes, "|") {
				t.Fatalf("causes = %q, want %q", types, tt.causes)
			}
			root, _ := st.Root()
			if root.Message != tt.rootMsg {
				t.Errorf("root message = %q, want %q", root.Message, tt.rootMsg)
			}
			at, ok := NewFrameRules(tt.appFrames).firstApp(st)
			if got := (Fault{At: at}).ThrownAt(); !ok || got != tt.app {
				t.Errorf("first app frame = %q (%v), want %q", got, ok, tt.app)
			}
		})
	}
}

// A .NET async state machine frame names the method the code has.
func TestParseAtFrameDotNetAsync(t *testing.T) {
	f, ok := parseAtFrame("Sales.Data.OrderRepository.<MarkShippedAsync>d__7.MoveNext() in /src/Sales.Data/OrderRepository.cs:line 118")
	if !ok || f.Func != "Sales.Data.OrderRepository.MarkShippedAsync" || f.Line != 118 || f.File != "/src/Sales.Data/OrderRepository.cs" {
		t.Fatalf("frame = %+v, %v", f, ok)
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{"com.acme.*", "com.acme.inventory.InventoryService.reserve", true},
		{"com.acme.*", "com.acmex.Foo.bar", false},
		{"*.inventory.*", "com.acme.inventory.X.y", true},
		{"Billing.?ateway.*", "Billing.Gateway.PspClient.ChargeAsync", true},
		{"Sales.*Handler.Handle", "Sales.Handlers.ShipOrderHandler.Handle", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		if got := globMatch(tt.glob, tt.name); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v", tt.glob, tt.name, got)
		}
	}
}

// FuzzParseStackTrace: any text parses without a panic, within the bounds,
// and quickly even when huge.
func FuzzParseStackTrace(f *testing.F) {
	for _, name := range []string{"spring-npe.txt", "spring-conversion.txt", "masstransit.txt", "nservicebus.txt", "celery.txt", "gopanic.txt"} {
		f.Add(readFault(f, name))
	}
	f.Add("panic: x\n\ngoroutine 1 [running]:\nmain.f(\n")
	f.Add("a ---> b ---> c: d\n   at (x\n--- End of inner exception stack trace ---")
	f.Add("Traceback (most recent call last):\n  File \"x")
	f.Fuzz(func(t *testing.T, text string) {
		st := ParseStackTrace(text)
		if len(st.Causes) > maxTraceCauses+1 {
			t.Fatalf("%d causes", len(st.Causes))
		}
		for _, c := range st.Causes {
			if len(c.Frames) > maxCauseFrames {
				t.Fatalf("%d frames", len(c.Frames))
			}
		}
		NewFrameRules([]string{"*a*b*"}).firstApp(st)
		FaultLabel(NormaliseFaultText(text), text)
		if lines := TraceLines(text, FrameRules{}); len(lines) > maxTraceLines {
			t.Fatalf("%d lines", len(lines))
		}
		f, _ := FaultOf(Headers{"x-exception-stacktrace": text}, FrameRules{})
		if k := f.Key(); len(k) > 4*maxReasonCode {
			t.Fatalf("key of %d bytes", len(k))
		}
	})
}

// A huge trace (a header of megabytes, one line or millions) is read only
// up to its bounds: parsing takes milliseconds, not seconds.
func TestParseStackTraceHugeIsBounded(t *testing.T) {
	frame := "\tat com.acme.inventory.InventoryService.reserve(InventoryService.java:88)\n"
	inputs := map[string]string{
		"many frames":  "java.lang.IllegalStateException: x\n" + strings.Repeat(frame, 200_000),
		"many causes":  strings.Repeat("Caused by: a.B: c\n", 300_000),
		"one line":     strings.Repeat("a ---> ", 2_000_000),
		"python":       "Traceback (most recent call last):\n" + strings.Repeat("  File \"/app/x.py\", line 1, in f\n", 200_000),
		"no newlines":  strings.Repeat("x", 20<<20),
		"arrows alone": strings.Repeat("---> ", 1_000_000),
	}
	for name, in := range inputs {
		start := time.Now()
		st := ParseStackTrace(in)
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("%s: %v", name, d)
		}
		if len(st.Causes) > maxTraceCauses+1 {
			t.Errorf("%s: %d causes", name, len(st.Causes))
		}
	}
}

// TraceLines tells the application's frames from the framework's, for the
// message page to mark them.
func TestTraceLinesMarkAppFrames(t *testing.T) {
	lines := TraceLines(readFault(t, "spring-npe.txt"), FrameRules{})
	var app []string
	frames := 0
	for _, l := range lines {
		if l.Frame {
			frames++
		}
		if l.App {
			app = append(app, l.Text)
		}
	}
	want := []string{"at com.acme.inventory.InventoryService.reserve(InventoryService.java:88)",
		"at com.acme.inventory.ReservationListener.onReserve(ReservationListener.java:41)"}
	if strings.Join(app, "|") != strings.Join(want, "|") || frames != 13 || len(lines) != 16 {
		t.Fatalf("%d lines, %d frames, app frames %q", len(lines), frames, app)
	}
	goLines := TraceLines(readFault(t, "gopanic.txt"), FrameRules{})
	if !goLines[4].App || goLines[8].App || !goLines[8].Frame {
		t.Fatalf("go frames: %+v", goLines)
	}
}

// BenchmarkFaultOf is the fingerprint's cost per message of a Spring
// parking queue: it runs for every message read.
func BenchmarkFaultOf(b *testing.B) {
	h := Headers{"x-exception-stacktrace": readFault(b, "spring-conversion.txt")}
	for b.Loop() {
		FaultOf(h, FrameRules{})
	}
}
