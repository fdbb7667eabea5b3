package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// maxHolders is how many connections a read names when another reader holds
// part of its queue.
const maxHolders = 3

// consumerConnections names the connections whose consumers read queue, as
// the management API lists them (its statistics are seconds old, so a
// consumer of a moment ago may be missing): the name the client gave its
// connection (dlqt's are "dlqt browse", "dlqt replay … hold"), else the
// broker's ("127.0.0.1:50412 -> 127.0.0.1:5672"). The consumers of conn,
// this reader's own, are left out. At most maxHolders; none when the
// management API does not answer: the names only say who, the count is
// the read's.
func (l *Live) consumerConnections(ctx context.Context, queue string, conn *amqp.Connection) []string {
	// Called when the queue has a consumer (a passive declare counted
	// it): a list without one is the statistics' lag (seen in a CI run
	// under load, where TestBrowseSaysHowManyMessagesAnotherReaderHolds
	// named no connection at all), so ask again a few times.
	var names []string
	for _, wait := range []time.Duration{0, 300 * time.Millisecond, 700 * time.Millisecond} {
		select {
		case <-ctx.Done():
			return names
		case <-time.After(wait):
		}
		if names = l.listConsumerConnections(ctx, queue, conn); len(names) > 0 {
			break
		}
	}
	return names
}

func (l *Live) listConsumerConnections(ctx context.Context, queue string, conn *amqp.Connection) []string {
	var q struct {
		ConsumerDetails []struct {
			Channel channelDetails `json:"channel_details"`
		} `json:"consumer_details"`
	}
	path := "queues/" + url.PathEscape(l.cfg.Vhost) + "/" + url.PathEscape(queue) + "?columns=consumer_details"
	if err := l.mgmt.get(ctx, path, &q); err != nil {
		return nil
	}
	own := ""
	if conn != nil {
		own = conn.LocalAddr().String()
	}
	var names []string
	for _, c := range q.ConsumerDetails {
		ch := c.Channel
		if ch.Connection == "" || slices.Contains(names, ch.Connection) {
			continue
		}
		if own != "" && net.JoinHostPort(ch.PeerHost, jsonNumber(ch.PeerPort)) == own {
			continue // this reader's own consumers
		}
		names = append(names, ch.Connection)
		if len(names) == maxHolders {
			break
		}
	}
	for i, name := range names {
		names[i] = l.givenName(ctx, name)
	}
	return names
}

// channelDetails is a consumer's channel as the management API lists it:
// an object, or an empty list while its statistics are not in yet, which
// made the whole list fail to decode (a read then named no holder at all).
type channelDetails struct {
	Connection string `json:"connection_name"`
	PeerHost   string `json:"peer_host"`
	PeerPort   any    `json:"peer_port"`
}

func (c *channelDetails) UnmarshalJSON(b []byte) error {
	if len(bytes.TrimSpace(b)) > 0 && bytes.TrimSpace(b)[0] != '{' {
		*c = channelDetails{}
		return nil
	}
	type plain channelDetails
	return json.Unmarshal(b, (*plain)(c))
}

// givenName is the name the client gave connection name, or name when it
// gave none (or the management API does not say).
func (l *Live) givenName(ctx context.Context, name string) string {
	var c struct {
		Given string `json:"user_provided_name"`
	}
	if err := l.mgmt.get(ctx, "connections/"+url.PathEscape(name)+"?columns=user_provided_name", &c); err != nil || c.Given == "" {
		return name
	}
	return c.Given
}

// jsonNumber is a port as the management API's JSON gives it (a number,
// decoded with UseNumber), as text.
func jsonNumber(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.Itoa(int(v))
	case interface{ String() string }:
		return v.String()
	}
	return ""
}
