package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
)

// Names of the scenario topology: broker dead-lettering into fanout parking
// queues, application-managed retries into a DLQ, and a legacy parking queue
// that applications publish their faults into.
const (
	billingDLX       = "billing.dlx"
	billingParking   = "billing.parking"
	billingInvoices  = "billing.invoices"
	billingReminders = "billing.reminders"
	billingExports   = "billing.exports"

	paymentsDLX     = "payments.dlx"
	paymentsParking = "payments.parking"
	paymentsCapture = "payments.capture"

	ordersExchange = "orders.exchange"
	ordersDLX      = "orders.dlx.exchange"
	ordersMain     = "orders.main.q"
	ordersDLQ      = "orders.dlq.q"
	ordersKey      = "orders"
	ordersDLQKey   = "orders.dlq"

	legacyFailed = "legacy.events.failed"

	// remindersPolicy sets billing.reminders' DLX, so that reading the
	// effective DLX has to look past the queue arguments.
	remindersPolicy = "billing-reminders-dlx"

	exportsMaxLength     = 2
	captureDeliveryLimit = 2
	parkingDeliveryLimit = 5
	remindersTTL         = 100 // ms
)

// ordersRetryBuckets are the order worker's retry queues, one per delay.
var ordersRetryBuckets = []struct {
	name string
	ttl  int32 // ms
}{
	{"orders.retry.1.q", 100},
	{"orders.retry.2.q", 200},
	{"orders.retry.3.q", 300},
}

// parkingOrder is the order of Scenarios.Parking.
var parkingOrder = []string{billingParking, paymentsParking, ordersDLQ, legacyFailed}

func notParking() []string {
	qs := []string{billingInvoices, billingReminders, billingExports, paymentsCapture, ordersMain}
	for _, b := range ordersRetryBuckets {
		qs = append(qs, b.name)
	}
	return qs
}

// scenarioQueues lists every queue the scenarios declare.
func scenarioQueues() []string {
	return append(append([]string{}, parkingOrder...), notParking()...)
}

type scenarioQueue struct {
	name string
	args amqp.Table
	bind []scenarioBinding
}

type scenarioBinding struct{ exchange, key string }

func scenarioTopology() (exchanges map[string]string, queues []scenarioQueue) {
	exchanges = map[string]string{
		billingDLX:     amqp.ExchangeFanout, // a graveyard is fanout: any routing key lands
		paymentsDLX:    amqp.ExchangeFanout,
		ordersExchange: amqp.ExchangeDirect,
		ordersDLX:      amqp.ExchangeDirect,
	}
	quorum := func(t amqp.Table) amqp.Table { t[amqp.QueueTypeArg] = amqp.QueueTypeQuorum; return t }
	queues = []scenarioQueue{
		{name: billingParking, args: amqp.Table{}, bind: []scenarioBinding{{billingDLX, ""}}},
		{name: billingInvoices, args: amqp.Table{"x-dead-letter-exchange": billingDLX}},
		// No DLX argument: the policy sets it.
		{name: billingReminders, args: amqp.Table{"x-message-ttl": int32(remindersTTL)}},
		{name: billingExports, args: amqp.Table{"x-max-length": int32(exportsMaxLength), "x-dead-letter-exchange": billingDLX}},

		{name: paymentsParking, args: quorum(amqp.Table{"x-delivery-limit": int32(parkingDeliveryLimit)}), bind: []scenarioBinding{{paymentsDLX, ""}}},
		{name: paymentsCapture, args: quorum(amqp.Table{"x-delivery-limit": int32(captureDeliveryLimit), "x-dead-letter-exchange": paymentsDLX})},

		// The work queue's own DLX takes what its consumer rejects outright
		// (a message it cannot even validate) straight to the DLQ.
		{name: ordersMain, args: amqp.Table{"x-dead-letter-exchange": ordersDLX, "x-dead-letter-routing-key": ordersDLQKey}, bind: []scenarioBinding{{ordersExchange, ordersKey}}},
		{name: ordersDLQ, args: amqp.Table{}, bind: []scenarioBinding{{ordersDLX, ordersDLQKey}}},

		{name: legacyFailed, args: amqp.Table{}},
	}
	for _, b := range ordersRetryBuckets {
		queues = append(queues, scenarioQueue{name: b.name, args: amqp.Table{
			"x-message-ttl":             b.ttl,
			"x-dead-letter-exchange":    ordersExchange,
			"x-dead-letter-routing-key": ordersKey,
		}})
	}
	return exchanges, queues
}

// putScenarioPolicy must run before billing.reminders is declared, so the
// queue is born with its DLX rather than waiting for the policy to reach it.
func putScenarioPolicy(cfg broker.Config) error {
	rh, err := cfg.ManagementClient()
	if err != nil {
		return err
	}
	_, err = rh.PutPolicy(cfg.Vhost, remindersPolicy, rabbithole.Policy{
		Pattern:    `^billing\.reminders$`,
		ApplyTo:    "queues",
		Definition: rabbithole.PolicyDefinition{"dead-letter-exchange": billingDLX},
	})
	if err != nil {
		return fmt.Errorf("scenarios: put policy %s in vhost %q: %w", remindersPolicy, cfg.Vhost, err)
	}
	return nil
}

func declareScenarioTopology(conn *amqp.Connection) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	exchanges, queues := scenarioTopology()
	for name, kind := range exchanges {
		if err := ch.ExchangeDeclare(name, kind, true, false, false, false, nil); err != nil {
			return fmt.Errorf("scenarios: declare exchange %s: %w", name, err)
		}
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			return fmt.Errorf("scenarios: declare queue %s: %w", q.name, err)
		}
		for _, b := range q.bind {
			if err := ch.QueueBind(q.name, b.key, b.exchange, false, nil); err != nil {
				return fmt.Errorf("scenarios: bind %s to %s: %w", q.name, b.exchange, err)
			}
		}
	}
	return nil
}

// waitManagementView polls the management API until it shows the settled
// scenarios: the policy on billing.reminders, every queue's depth, and no
// consumers. Its queue figures come from stats each queue emits every few
// seconds (a new quorum queue took ~7 s on 3.10), and dlqt reads topology
// there, so a reader started earlier would see a DLX-less billing.reminders
// and empty queues.
func waitManagementView(ctx context.Context, cfg broker.Config, want map[string]int) error {
	rh, err := cfg.ManagementClient()
	if err != nil {
		return err
	}
	for {
		qs, err := rh.ListQueuesIn(cfg.Vhost)
		if err != nil {
			return fmt.Errorf("management: list queues of %q: %w", cfg.Vhost, err)
		}
		var off []string
		seen := map[string]bool{}
		for _, q := range qs {
			n, ok := want[q.Name]
			if !ok {
				continue
			}
			seen[q.Name] = true
			if q.Messages != n || q.Consumers != 0 {
				off = append(off, fmt.Sprintf("%s: %d messages (want %d), %d consumers", q.Name, q.Messages, n, q.Consumers))
			}
			if q.Name == billingReminders && q.Policy != remindersPolicy {
				off = append(off, fmt.Sprintf("%s: policy %q (want %s)", q.Name, q.Policy, remindersPolicy))
			}
		}
		for name := range want {
			if !seen[name] {
				off = append(off, name+": not listed yet")
			}
		}
		if len(off) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("management API still shows %s: %w", strings.Join(off, "; "), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
