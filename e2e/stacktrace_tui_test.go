package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// TestTUIStackTraceShowsAsLinesAndCopies: issue 20 item 4 in a real
// terminal. A Spring AMQP failure parked with its x-exception-stacktrace
// groups by root cause and where it was thrown; its message page shows the
// trace one frame a line (no literal \n, no name cut in two), the
// application's frame marked with ›; y writes the whole trace to a 0600
// file (tmux takes no OSC 52 here) and says where.
func TestTUIStackTraceShowsAsLinesAndCopies(t *testing.T) {
	brokertest.SkipShort(t)
	trace, err := os.ReadFile(filepath.Join("..", "internal", "triage", "testdata", "faults", "spring-conversion.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := brokertest.NewVhost(t, "stacktrace")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("inventory.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Publish("", "inventory.dlq", false, false, amqp.Publishing{
		MessageId: "inv-0001", ContentType: "application/json", DeliveryMode: amqp.Persistent,
		Body: []byte(`{"sku":"A-1042","qty":3,}`),
		Headers: amqp.Table{
			"x-exception-stacktrace": string(trace), "x-exception-message": "Failed to convert message",
			"x-original-exchange": "inventory", "x-original-routingKey": "inventory.reserve",
		},
	}); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitDepth(t, conn, "inventory.dlq", 1)

	env := brokerEnv(t, cfg)
	home := strings.TrimPrefix(env[0], "HOME=")
	s := startTerm(t, 80, 40, env, "--queue", "inventory.dlq")
	s.waitFor("JsonParseException @ InventoryService.reserve:88")
	s.keys("Enter")
	s.waitFor("inv-0001")
	s.keys("Enter")
	s.waitFor("message inv-0001", "stack trace (x-exception-stacktrace, 21 lines, 1 app frame ›; y copies it)")
	scr := s.scrollTo("› at com.acme.inventory.InventoryService.reserve(InventoryService.java:88)")
	if strings.Contains(scr, `\n`) {
		t.Fatalf("a literal \\n on the message page:\n%s", scr)
	}
	frame := regexp.MustCompile(`(?m)^ {4}at com\.fasterxml\.jackson\.core\.JsonParser\._constructError\(`)
	if !frame.MatchString(scr) || !regexp.MustCompile(`(?m)^  › at com\.acme\.inventory\.InventoryService\.reserve\(InventoryService\.java:88\)`).MatchString(scr) {
		t.Fatalf("frames are not on lines of their own:\n%s", scr)
	}
	flat := strings.Join(strings.Fields(scr), " ")
	for _, name := range []string{"UTF8StreamJsonParser._handleOddName(", "ObjectMapper._readMapAndClose(", "AbstractJackson2MessageConverter.convertBytesToObject("} {
		if !strings.Contains(flat, name) {
			t.Errorf("%q is cut in two:\n%s", name, scr)
		}
	}

	s.keys("y")
	scr = s.waitFor("trace written to ~/state/dlqt/traces/dlqt-trace-inv-0001-")
	files, _ := filepath.Glob(filepath.Join(home, "state", "dlqt", "traces", "dlqt-trace-inv-0001-*.txt"))
	if len(files) != 1 {
		t.Fatalf("trace files %v:\n%s", files, scr)
	}
	st, err := os.Stat(files[0])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("trace file mode %v: %v", st.Mode(), err)
	}
	copied, _ := os.ReadFile(files[0])
	if lines := strings.Split(strings.TrimSpace(string(copied)), "\n"); len(lines) != 21 || !strings.HasPrefix(lines[0], "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException") {
		t.Fatalf("copied trace (%d lines):\n%s", len(lines), copied)
	}
	s.keys("q")
	waitExit(t, s)
}
