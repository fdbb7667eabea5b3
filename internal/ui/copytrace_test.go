package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// traceScenario is the scenario with a Spring trace on m-1001, a card
// number in its exception text.
func traceScenario() *fakeReader {
	r := scenario()
	r.messages["orders.dlq"][0].Headers["x-exception-stacktrace"] = "java.lang.IllegalStateException: card 4111 1111 1111 1111 refused\n" +
		"\tat com.acme.pay.Charger.charge(Charger.java:12)\n\tat org.springframework.amqp.rabbit.listener.X.onMessage(X.java:1)\n"
	return r
}

// TestCopyTraceWritesAFileWithoutAClipboard: y on the message screen
// writes the whole trace, redacted, one frame a line, to a new 0600 file in
// the state directory and says where.
func TestCopyTraceWritesAFileWithoutAClipboard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "traces")
	t.Setenv("HOME", filepath.Dir(dir))
	h := newHarness(t, Options{Reader: traceScenario(), TraceDir: dir}, 80, 24)
	openM1001(h)
	for !strings.Contains(h.screen(), "› at com.acme.pay.Charger.charge(Charger.java:12)") && strings.Contains(h.screen(), "%") {
		h.press("down") // scroll to the trace
		if strings.Contains(h.screen(), "100%") {
			break
		}
	}
	h.mustShow("stack trace (x-exception-stacktrace, 3 lines, 1 app frame ›; y copies", "› at com.acme.pay.Charger.charge(Charger.java:12)")
	h.press("copy_trace")
	files, _ := filepath.Glob(filepath.Join(dir, "dlqt-trace-m-1001-*.txt"))
	if len(files) != 1 {
		t.Fatalf("files %v\n%s", files, h.screen())
	}
	h.mustShow("trace written to ~/traces/" + filepath.Base(files[0]))
	st, err := os.Stat(files[0])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("trace file %v: %v", st.Mode(), err)
	}
	b, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "at com.acme.pay.Charger.charge(Charger.java:12)") || strings.Contains(string(b), "4111 1111 1111 1111") {
		t.Fatalf("trace file:\n%s", b)
	}
}

// TestCopyTraceUsesTheClipboardWhereTheTerminalTakesIt: with OSC 52 the
// same text goes to the clipboard and no file is written.
func TestCopyTraceUsesTheClipboardWhereTheTerminalTakesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "traces")
	h := newHarness(t, Options{Reader: traceScenario(), TraceDir: dir, Clipboard: true}, 120, 40)
	openM1001(h)
	_, cmd := h.m.Update(keyPress("y"))
	if cmd == nil {
		t.Fatal("y asked for nothing")
	}
	copied := fmt.Sprint(cmd())
	if !strings.HasPrefix(copied, "java.lang.IllegalStateException: card [REDACTED") || !strings.Contains(copied, "\n") {
		t.Fatalf("clipboard got %q", copied)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a file was written: %v", err)
	}
	h.mustShow("stack trace (x-exception-stacktrace, 3 lines) copied to the clipboard")
}

// TestCopyTraceSaysWhenThereIsNone: a message without a trace says so.
func TestCopyTraceSaysWhenThereIsNone(t *testing.T) {
	h := newHarness(t, Options{TraceDir: t.TempDir()}, 120, 40)
	openM1001(h)
	h.press("copy_trace")
	h.mustShow("this message has no stack trace to copy")
}
