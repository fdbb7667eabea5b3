package broker

import (
	"encoding/json"
	"testing"
)

// RabbitMQ 3.10, asked for ?columns=, sends "message_stats": [] for a queue
// whose stats lack the column (a parking queue fed only by dead-lettering
// and since browsed); one such queue once failed Topology for the vhost.
func TestQueueJSONAcceptsAnEmptyMessageStatsList(t *testing.T) {
	for _, tt := range []struct {
		body string
		rate float64
	}{
		{`{"name":"p","message_stats":[]}`, 0},
		{`{"name":"p","message_stats":{"publish_details":{"rate":2.5}}}`, 2.5},
		{`{"name":"p"}`, 0},
	} {
		var q queueJSON
		if err := json.Unmarshal([]byte(tt.body), &q); err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		if q.MessageStats.PublishDetails.Rate != tt.rate {
			t.Errorf("%s: rate %v, want %v", tt.body, q.MessageStats.PublishDetails.Rate, tt.rate)
		}
	}
}
