package broker

import (
	"encoding/json"
	"testing"
)

// The management API lists a consumer whose channel statistics are not in
// yet with "channel_details": []; the list must still decode, that
// consumer without a connection, the others with theirs.
func TestConsumerDetailsWithAChannelNotInYet(t *testing.T) {
	var q struct {
		ConsumerDetails []struct {
			Channel channelDetails `json:"channel_details"`
		} `json:"consumer_details"`
	}
	body := `{"consumer_details":[{"channel_details":[]},{"channel_details":{"connection_name":"127.0.0.1:5 -> 127.0.0.1:5672","peer_host":"127.0.0.1","peer_port":5}}]}`
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		t.Fatal(err)
	}
	if len(q.ConsumerDetails) != 2 || q.ConsumerDetails[0].Channel.Connection != "" || q.ConsumerDetails[1].Channel.Connection != "127.0.0.1:5 -> 127.0.0.1:5672" {
		t.Fatalf("decoded %+v", q)
	}
}
