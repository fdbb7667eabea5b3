package views

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

func faultSample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../triage/testdata/faults/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// springMessage is a Spring AMQP failure as triage reads it, with a
// password in the exception text.
func springMessage(t *testing.T) triage.Triaged {
	trace := strings.Replace(faultSample(t, "spring-conversion.txt"), "Failed to convert message",
		"Failed to convert message for password=Hunter2-trace", 1)
	m := triage.Message{Queue: "inventory.dlq", Properties: triage.Properties{MessageID: "inv-1"},
		Headers: triage.Headers{"x-exception-stacktrace": trace, "x-original-exchange": "inventory"}}
	return triage.Analyze(triage.Batch{Queue: "inventory.dlq", Messages: []triage.Message{m}}, triage.Topology{}, redact.New())[0]
}

// TestMessageShowsTheStackTraceAsLines: issue 20 item 4. The trace reads
// as lines (no literal \n), long frames wrap at a frame's boundaries with
// a deeper indent and never inside a name, the application's frames are
// marked without colour, and it is redacted like every header.
func TestMessageShowsTheStackTraceAsLines(t *testing.T) {
	for _, width := range []int{80, 120} {
		v := NewMessage(testContext())
		v.SetSize(width, 400)
		v.SetMessage(springMessage(t), triage.DeliveryCost{}, redact.New(), nil)
		screen := ansi.Strip(v.View())
		section, _, _ := strings.Cut(screen[strings.Index(screen, "stack trace ("):], "attempt timeline")
		if strings.Contains(section, `\n`) {
			t.Fatalf("%d columns: literal \\n in the trace:\n%s", width, section)
		}
		if strings.Contains(screen, "Hunter2-trace") {
			t.Fatalf("%d columns: the trace's secret is on screen", width)
		}
		for _, want := range []string{
			"stack trace (x-exception-stacktrace, 21 lines, 1 app frame ›)",
			"\n  org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: ",
			"\n  Caused by: com.fasterxml.jackson.core.JsonParseException: Unexpected",
			"\n  › at com.acme.inventory.InventoryService.reserve(InventoryService.java:88)",
			"\n    at com.fasterxml.jackson.core.JsonParser._constructError(",
			"(shown above as the stack trace)",
			"exception       com.fasterxml.jackson.core.JsonParseException",
			"thrown at       com.acme.inventory.InventoryService.reserve:88",
		} {
			if !strings.Contains(section+screen, want) {
				t.Errorf("%d columns: no %q:\n%s", width, want, section)
			}
		}
		// Every frame starts a line of its own; no name is cut.
		lines := strings.Split(section, "\n")
		frames := 0
		for _, l := range lines {
			if regexp.MustCompile(`^  [ ›] at `).MatchString(l) {
				frames++
			}
			if len(strings.TrimRight(l, " ")) > 0 && ansi.StringWidth(strings.TrimRight(l, " ")) > width {
				t.Errorf("%d columns: line too wide: %q", width, l)
			}
		}
		if frames != 14 {
			t.Errorf("%d columns: %d frame lines, want 14:\n%s", width, frames, section)
		}
		flat := strings.Join(strings.Fields(section), " ")
		for _, name := range []string{"MessagingMessageListenerAdapter", "AbstractMessageListenerContainer", "SimpleMessageListenerContainer$AsyncMessageProcessingConsumer",
			"AbstractJackson2MessageConverter.java:359", "UTF8StreamJsonParser.java:2013"} {
			if !strings.Contains(flat, name) {
				t.Errorf("%d columns: %q was split:\n%s", width, name, section)
			}
		}
	}
}

func TestWrapTraceKeepsNamesWhole(t *testing.T) {
	line := "at org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.onMessage(MessagingMessageListenerAdapter.java:148)"
	parts := wrapTrace(line, 60, 56)
	for _, p := range parts {
		if ansi.StringWidth(p) > 60 {
			t.Errorf("part too wide: %q", p)
		}
	}
	if got := strings.Join(parts, ""); got != line {
		t.Fatalf("wrapping lost text: %q", got)
	}
	for _, p := range parts[:len(parts)-1] {
		if last := p[len(p)-1]; last != '.' && last != '(' && last != ' ' {
			t.Errorf("cut inside a name after %q (parts %q)", p, parts)
		}
	}
}

// FuzzWrapTrace: any line at any width wraps into parts that fit (but a
// single rune wider than the width), keep every non-space character in
// order, and end.
func FuzzWrapTrace(f *testing.F) {
	f.Add("at org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.onMessage(MessagingMessageListenerAdapter.java:148)", 30, 24)
	f.Add("Caused by: 日本語の例外: ありません ---> x", 11, 10)
	f.Add(strings.Repeat("a", 300), 10, 12)
	f.Fuzz(func(t *testing.T, line string, first, rest int) {
		line = sanitizeForTest(line)
		first, rest = first%200, rest%200
		parts := wrapTrace(line, first, rest)
		if got, want := strings.Join(strings.Fields(strings.Join(parts, "")), ""), strings.Join(strings.Fields(line), ""); got != want {
			t.Fatalf("text changed: %q -> %q", line, parts)
		}
		for i, p := range parts {
			w := max(rest, 10)
			if i == 0 {
				w = max(first, 10)
			}
			if ansi.StringWidth(p) > w && len([]rune(p)) > 1 {
				t.Fatalf("part %q wider than %d", p, w)
			}
		}
	})
}

// sanitizeForTest is what the page hands wrapTrace: one sanitised line.
func sanitizeForTest(s string) string { return sanitize.Line(s) }

// A one-line x-error ("Max retry attempts exceeded") is no stack trace:
// no section pushes the timeline down, and the header shows it as it is.
func TestOneLineErrorIsNoStackTrace(t *testing.T) {
	m := triage.Message{Queue: "orders.dlq.q", Properties: triage.Properties{MessageID: "ord-1"},
		Headers: triage.Headers{"x-error": "Max retry attempts exceeded"}}
	tr := triage.Analyze(triage.Batch{Queue: "orders.dlq.q", Messages: []triage.Message{m}}, triage.Topology{}, nil)[0]
	v := NewMessage(testContext())
	v.SetSize(100, 200)
	v.SetMessage(tr, triage.DeliveryCost{}, redact.New(), nil)
	screen := ansi.Strip(v.View())
	if strings.Contains(screen, "stack trace (") || !strings.Contains(screen, "x-error: Max retry attempts exceeded") {
		t.Fatalf("screen:\n%s", screen)
	}
	if text, _ := v.Trace(); text != "" {
		t.Fatalf("a trace to copy: %q", text)
	}
}
