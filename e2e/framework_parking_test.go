package e2e

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/cli"
	"github.com/dlqt/dlqt/internal/triage/doctor"
)

// TestFrameworkParkingQueuesAreListedWithTheirRule: the queues NServiceBus,
// MassTransit and Spring park failures in by default, which no dead-letter
// exchange feeds, are parking queues on `dlqt queues`, each with the rule
// that found it, and the doctor names the rule; a queue whose name merely
// contains "error" is not one.
func TestFrameworkParkingQueuesAreListedWithTheirRule(t *testing.T) {
	cfg := brokertest.NewVhost(t, "frameworks")
	ch, err := brokertest.Dial(t, cfg).Channel()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"error":           "name =error (NServiceBus)",
		"Sales.error":     "name *.error (NServiceBus)",
		"billing_error":   "name *_error (MassTransit)",
		"billing_skipped": "name *_skipped (MassTransit)",
		"inventory.DLQ":   "name *.dlq (Spring AMQP)",
		"errors_total":    "",
	}
	for q := range want {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if err := ch.Publish("", "error", false, false, amqp.Publishing{Body: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	env := brokerEnv(t, cfg)
	rows := decodeJSON[[]cli.QueueRow](t, runDlqt(t, env, "queues", "--json"))
	if len(rows) != len(want) {
		t.Fatalf("%d queues listed, want %d: %+v", len(rows), len(want), rows)
	}
	for _, r := range rows {
		if r.Rule != want[r.Name] || r.Parking != (want[r.Name] != "") {
			t.Errorf("%s: parking %v, rule %q; want rule %q", r.Name, r.Parking, r.Rule, want[r.Name])
		}
	}
	text := runDlqt(t, env, "queues")
	if !strings.Contains(text.stdout, "parking  name =error (NServiceBus)") {
		t.Errorf("the table does not say which rule found error:\n%s", text.stdout)
	}
	fs, _ := doctorJSON(t, env)
	said := map[string]string{}
	for _, f := range fs {
		if f.Kind == doctor.KindParkingByName {
			said[f.Queue] = f.Detail
		}
	}
	if d := said["error"]; !strings.Contains(d, "(name =error (NServiceBus))") {
		t.Errorf("the doctor does not name the rule that found error: %q (all: %+v)", d, fs)
	}
	if _, ok := said["errors_total"]; ok {
		t.Errorf("the doctor takes errors_total for a parking queue")
	}
}
