package broker_test

import (
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// The shapes the management API gives for queues it has no statistics for
// yet, empty queues, heads without a timestamp, and older brokers.
func TestQueueDecodingToleratesWhatTheAPIOmits(t *testing.T) {
	cases := []struct {
		name, json string
		check      func(t *testing.T, q triage.Queue)
	}{
		{"no stats yet, no type", `{"name":"fresh","arguments":{},"policy":null}`, func(t *testing.T, q triage.Queue) {
			if q.Type != "classic" || q.Messages != 0 || !q.HeadPublished.IsZero() || q.Policy != "" {
				t.Errorf("%+v", q)
			}
		}},
		{"head without timestamp", `{"name":"q","type":"classic","head_message_timestamp":""}`, func(t *testing.T, q triage.Queue) {
			if !q.HeadPublished.IsZero() {
				t.Errorf("head published %v", q.HeadPublished)
			}
		}},
		{"head timestamp in seconds", `{"name":"q","type":"classic","head_message_timestamp":1700000000}`, func(t *testing.T, q triage.Queue) {
			if !q.HeadPublished.Equal(time.Unix(1700000000, 0)) {
				t.Errorf("head published %v", q.HeadPublished)
			}
		}},
		{"policy only", `{"name":"q","type":"quorum","arguments":{"x-queue-type":"quorum"},"policy":"p",
			"effective_policy_definition":{"dead-letter-exchange":"dlx","dead-letter-routing-key":"rk","delivery-limit":7,"max-length":10,"overflow":"reject-publish"}}`,
			func(t *testing.T, q triage.Queue) {
				if q.DeadLetterExchange != "dlx" || !q.DLXFromPolicy || q.DeadLetterRoutingKey != "rk" || q.DeliveryLimit != 7 ||
					q.MaxLength != 10 || q.Overflow != "reject-publish" || q.Policy != "p" {
					t.Errorf("%+v", q)
				}
			}},
		{"empty DLX name is the default exchange", `{"name":"q","arguments":{"x-dead-letter-exchange":""}}`, func(t *testing.T, q triage.Queue) {
			if !q.HasDeadLetterExchange || q.DeadLetterExchange != "" || q.DLXFromPolicy {
				t.Errorf("%+v", q)
			}
		}},
		{"rates and counts", `{"name":"q","messages":42,"consumers":2,"message_stats":{"publish_details":{"rate":1.5}}}`, func(t *testing.T, q triage.Queue) {
			if q.Messages != 42 || q.Consumers != 2 || q.PublishRate != 1.5 {
				t.Errorf("%+v", q)
			}
		}},
		{"depth growth rate", `{"name":"q","messages":30,"messages_details":{"rate":0.5}}`, func(t *testing.T, q triage.Queue) {
			if q.DepthRate != 0.5 || q.Ingress() != 0.5 {
				t.Errorf("depth rate %v, ingress %v; want 0.5 (no publish rate: dead letters)", q.DepthRate, q.Ingress())
			}
		}},
		// samples newest first, 5 minutes apart: empty 15 minutes ago, never
		// lower since, so the oldest message is at least 10 minutes old
		{"held since the depth last rose from empty", `{"name":"q","messages":9,"messages_details":{"rate":0,"samples":[
			{"sample":9,"timestamp":1700000900000},{"sample":9,"timestamp":1700000600000},{"sample":4,"timestamp":1700000300000},
			{"sample":0,"timestamp":1700000000000},{"sample":7,"timestamp":1699999700000}]}}`, func(t *testing.T, q triage.Queue) {
			if !q.HeldSince.Equal(time.UnixMilli(1700000300000)) {
				t.Errorf("held since %v, want the first sample after the empty one", q.HeldSince)
			}
		}},
		{"a fall in depth ends what is known", `{"name":"q","messages":3,"messages_details":{"samples":[
			{"sample":3,"timestamp":1700000900000},{"sample":8,"timestamp":1700000600000}]}}`, func(t *testing.T, q triage.Queue) {
			if !q.HeldSince.IsZero() {
				t.Errorf("held since %v: messages taken away since may have been the oldest, and 'at least 0s' says nothing", q.HeldSince)
			}
		}},
		{"empty now", `{"name":"q","messages":0,"messages_details":{"samples":[{"sample":0,"timestamp":1700000900000},{"sample":5,"timestamp":1700000600000}]}}`,
			func(t *testing.T, q triage.Queue) {
				if !q.HeldSince.IsZero() {
					t.Errorf("held since %v for an empty queue", q.HeldSince)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := broker.DecodeQueue(c.json)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, q)
		})
	}
}
