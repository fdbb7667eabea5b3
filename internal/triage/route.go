package triage

import (
	"fmt"
	"strings"
)

// Route is where a message is published: an exchange ("" is the default
// exchange) and a routing key. Written EXCHANGE:ROUTING_KEY, the default
// exchange as :ROUTING_KEY.
type Route struct {
	Exchange   string `json:"exchange"`
	RoutingKey string `json:"routing_key"`
}

func (r Route) String() string { return r.Exchange + ":" + r.RoutingKey }

// ParseRoute reads EXCHANGE:ROUTING_KEY. The routing key may itself contain
// colons; the exchange may not.
func ParseRoute(s string) (Route, error) {
	ex, key, ok := strings.Cut(s, ":")
	if !ok {
		return Route{}, fmt.Errorf("destination %q: want EXCHANGE:ROUTING_KEY (the default exchange is written :ROUTING_KEY)", s)
	}
	return Route{Exchange: ex, RoutingKey: key}, nil
}
