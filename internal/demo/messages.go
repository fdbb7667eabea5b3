package demo

import (
	"encoding/json"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// scenarioEnvelope is the diagnostic envelope the scenario applications
// write: identity and schema up front, the business data
// under "data", and a failure block once the application knows why it gave up.
type scenarioEnvelope struct {
	MessageID     string           `json:"message_id,omitempty"`
	EventType     string           `json:"event_type"`
	SchemaVersion int              `json:"schema_version"`
	OccurredAt    string           `json:"occurred_at"`
	CorrelationID string           `json:"correlation_id,omitempty"`
	Data          map[string]any   `json:"data"`
	Failure       *scenarioFailure `json:"failure,omitempty"`
}

type scenarioFailure struct {
	ReasonCode      string `json:"reason_code"`
	Consumer        string `json:"consumer"`
	ConsumerVersion string `json:"consumer_version"`
	Attempt         int    `json:"attempt"`
	FirstFailedAt   string `json:"first_failed_at"`
	LastFailedAt    string `json:"last_failed_at"`
}

// event builds one envelope published by app: AMQP message_id and timestamp
// set (the timestamp is what head_message_timestamp reports), occurred_at a
// little earlier, as a producer's clock would have it.
func event(now time.Time, app, id, eventType string, schema int, data map[string]any) (scenarioEnvelope, amqp.Publishing) {
	env := scenarioEnvelope{
		MessageID:     id,
		EventType:     eventType,
		SchemaVersion: schema,
		OccurredAt:    now.Add(-90 * time.Second).Format(time.RFC3339),
		CorrelationID: "cor_" + id,
		Data:          data,
	}
	return env, amqp.Publishing{
		ContentType:   "application/json",
		DeliveryMode:  amqp.Persistent,
		MessageId:     id,
		CorrelationId: env.CorrelationID,
		Timestamp:     now,
		Type:          eventType,
		AppId:         app,
		Body:          mustJSON(env),
	}
}

// mustJSON encodes values built in this package from maps, strings and
// numbers only, which cannot fail to encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A customer with everything a support ticket tends to drag into a payload.
func customer(id, name, email string) map[string]any {
	return map[string]any{"id": id, "name": name, "email": email, "locale": "vi-VN"}
}
