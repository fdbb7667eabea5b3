package views

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

const pageTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"

func tracedPage(t *testing.T, ctx *Context, h triage.Headers) string {
	return tracedPageWith(t, ctx, h, nil)
}

func tracedPageWith(t *testing.T, ctx *Context, h triage.Headers, red *redact.Redactor) string {
	t.Helper()
	m := triage.Message{Queue: "orders.dlq", Headers: h, Body: []byte(`{"event_type":"order.placed"}`)}
	tr := triage.Analyze(triage.Batch{Messages: []triage.Message{m}}, triage.Topology{}, nil)[0]
	v := NewMessage(ctx)
	v.SetSize(120, 200)
	v.SetMessage(tr, triage.DeliveryCost{}, red, nil)
	return v.View()
}

// The page names the trace and, with trace_url, links it: an OSC 8
// hyperlink only where the terminal takes one, else the URL as text.
func TestMessagePageShowsTheTraceAndItsLink(t *testing.T) {
	h := triage.Headers{"traceparent": "00-" + pageTraceID + "-00f067aa0ba902b7-01"}
	tmpl, err := triage.ParseTraceURL("https://tempo.example/trace/{trace_id}")
	if err != nil {
		t.Fatal(err)
	}
	url := "https://tempo.example/trace/" + pageTraceID

	ctx := testContext()
	screen := tracedPage(t, ctx, h)
	if !strings.Contains(ansi.Strip(screen), "trace id        "+pageTraceID+" (traceparent)") {
		t.Errorf("no trace id on the page:\n%s", ansi.Strip(screen))
	}
	if strings.Contains(screen, "tempo.example") {
		t.Error("a link without trace_url")
	}

	ctx.TraceURL = tmpl
	screen = tracedPage(t, ctx, h)
	if !strings.Contains(screen, "trace link      "+url) || strings.Contains(screen, "\x1b]8;") {
		t.Errorf("want the URL as plain text where hyperlinks are not known to work:\n%q", screen)
	}

	ctx.Hyperlinks = true
	screen = tracedPage(t, ctx, h)
	if want := ansi.SetHyperlink(url) + url + ansi.ResetHyperlink(); !strings.Contains(screen, want) {
		t.Errorf("no OSC 8 link %q on the page:\n%q", want, screen)
	}

	// A configured rule that masks the id masks it here too, and no link
	// carries it.
	red := redact.New().With(nil, []redact.ValueRule{{Kind: "trace", Pattern: regexp.MustCompile(`4bf92f35[0-9a-f]+`)}})
	screen = tracedPageWith(t, ctx, h, red)
	if strings.Contains(screen, pageTraceID) || !strings.Contains(ansi.Strip(screen), "trace id        [REDACTED:trace]") || strings.Contains(screen, "tempo.example") {
		t.Errorf("a masked trace id shows or links:\n%s", ansi.Strip(screen))
	}

	// A header that tries to smuggle its own link makes none.
	screen = tracedPage(t, ctx, triage.Headers{"X-B3-TraceId": "\x1b]8;;https://evil.example\x07" + pageTraceID})
	if strings.Contains(screen, "\x1b]8;;https://evil") || strings.Contains(screen, "tempo.example") || strings.Contains(ansi.Strip(screen), "trace id") {
		t.Errorf("a link or a trace id from message text:\n%q", screen)
	}
}
