package triage

import (
	"encoding/json"
	"testing"
)

func TestParseBrokerVersion(t *testing.T) {
	for _, c := range []struct {
		in   string
		want BrokerVersion
	}{
		{"3.10.8", BrokerVersion{3, 10, 8}},
		{"4.0.5", BrokerVersion{4, 0, 5}},
		{" 4.3.6 ", BrokerVersion{4, 3, 6}},
		{"3.13.7+1.g0ab1c2d", BrokerVersion{3, 13, 7}},
		{"4.1.0-rc.1", BrokerVersion{4, 1, 0}},
		{"4.2", BrokerVersion{4, 2, 0}},
		{"", BrokerVersion{}},
		{"unknown", BrokerVersion{}},
	} {
		if got := ParseBrokerVersion(c.in); got != c.want {
			t.Errorf("ParseBrokerVersion(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	if !(BrokerVersion{4, 0, 0}).AtLeast(4, 0) || (BrokerVersion{3, 13, 7}).AtLeast(4, 0) || (BrokerVersion{}).AtLeast(0, 0) {
		t.Error("AtLeast")
	}
	b, _ := json.Marshal(Topology{Broker: NewBroker("4.3.6", []string{"rabbitmq_4.3.0"})})
	var back Topology
	if err := json.Unmarshal(b, &back); err != nil || back.Broker.Version != (BrokerVersion{4, 3, 6}) || !back.Broker.FreeRequeue {
		t.Errorf("round trip of %s: %+v, %v", b, back.Broker, err)
	}
	if b, _ := json.Marshal(Topology{}); string(b) != `{"vhost":"","queues":null,"exchanges":null,"bindings":null}` {
		t.Errorf("an unknown broker must not change the JSON of a topology: %s", b)
	}
}

func TestNewBrokerFreeRequeueNeedsTheFlag(t *testing.T) {
	for _, c := range []struct {
		version string
		flags   []string
		free    bool
	}{
		{"3.10.8", []string{"quorum_queue"}, false},
		{"4.0.5", []string{"rabbitmq_4.0.0"}, false},
		{"4.3.6", []string{"rabbitmq_4.0.0", "rabbitmq_4.3.0"}, true},
		{"4.3.6", []string{"rabbitmq_4.0.0"}, false}, // a cluster still upgrading
		{"4.3.6", nil, false},                        // flags unreadable: assume the old queue
		{"", []string{"rabbitmq_4.3.0"}, false},
	} {
		if got := NewBroker(c.version, c.flags).FreeRequeue; got != c.free {
			t.Errorf("%s %v: FreeRequeue = %v, want %v", c.version, c.flags, got, c.free)
		}
	}
}

// The effective delivery limit of each kind of queue on each version, as
// measured on 3.10.8, 4.0.5 and 4.3.6.
func TestEffectiveDeliveryLimitPerVersion(t *testing.T) {
	v310, v313, v40, v43 := BrokerVersion{3, 10, 8}, BrokerVersion{3, 13, 7}, BrokerVersion{4, 0, 5}, BrokerVersion{4, 3, 6}
	quorum := func(limit int64, set bool) Queue {
		return Queue{Name: "q", Type: QueueQuorum, DeliveryLimit: limit, DeliveryLimitSet: set}
	}
	for _, c := range []struct {
		name    string
		q       Queue
		v       BrokerVersion
		limit   int64
		limited bool
	}{
		{"classic", Queue{Type: QueueClassic, DeliveryLimit: 5}, v40, 0, false},
		{"stream", Queue{Type: QueueStream}, v43, 0, false},
		{"quorum, none set, 3.10", quorum(0, false), v310, 0, false},
		{"quorum, none set, 3.13", quorum(0, false), v313, 0, false},
		{"quorum, none set, 4.0 default", quorum(0, false), v40, 20, true},
		{"quorum, none set, 4.3 default", quorum(0, false), v43, 20, true},
		{"quorum, none set, unknown version", quorum(0, false), BrokerVersion{}, 20, true},
		{"quorum, 5, 3.10", quorum(5, true), v310, 5, true},
		{"quorum, 5 without the set flag (older snapshots)", quorum(5, false), v40, 5, true},
		{"quorum, 0 dead-letters on every return", quorum(0, true), v310, 0, true},
		{"quorum, 0 on 4.0", quorum(0, true), v40, 0, true},
		{"quorum, -1 on 3.10 acts as 0", quorum(-1, true), v310, 0, true},
		{"quorum, -1 on 4.0 is unlimited", quorum(-1, true), v40, 0, false},
		{"quorum, -1 on 4.3 is unlimited", quorum(-1, true), v43, 0, false},
		{"quorum, -1 unknown version: the careful reading", quorum(-1, true), BrokerVersion{}, 0, true},
	} {
		limit, limited := EffectiveDeliveryLimit(c.q, c.v)
		if limit != c.limit || limited != c.limited {
			t.Errorf("%s: EffectiveDeliveryLimit = %d, %v; want %d, %v", c.name, limit, limited, c.limit, c.limited)
		}
	}
}

func TestResolveDeliveryLimitPerVersion(t *testing.T) {
	v310, v40 := BrokerVersion{3, 10, 8}, BrokerVersion{4, 0, 5}
	for _, c := range []struct {
		name           string
		arg, pol       int64
		hasArg, hasPol bool
		v              BrokerVersion
		want           int64
		wantOK         bool
	}{
		{"neither", 0, 0, false, false, v40, 0, false},
		{"argument only", 5, 0, true, false, v40, 5, true},
		{"policy only", 0, 7, false, true, v40, 7, true},
		{"the lower of both", 5, 1, true, true, v310, 1, true},
		{"the lower of both, 4.0", 5, 1, true, true, v40, 1, true},
		{"0 is a limit", 0, 5, true, true, v40, 0, true},
		{"4.0: a negative policy yields to the argument", 5, -1, true, true, v40, 5, true},
		{"4.0: a negative argument yields to the policy", -1, 3, true, true, v40, 3, true},
		{"4.0: both negative stay unlimited", -1, -1, true, true, v40, -1, true},
		{"3.10: plain min", 5, -1, true, true, v310, -1, true},
	} {
		got, ok := ResolveDeliveryLimit(c.arg, c.pol, c.hasArg, c.hasPol, c.v)
		if got != c.want || ok != c.wantOK {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
}

// Who is asked before a read, and how many peeks a message has left.
func TestDeliveryCostPerVersion(t *testing.T) {
	b310, b40 := NewBroker("3.10.8", nil), NewBroker("4.0.5", nil)
	b43 := NewBroker("4.3.6", []string{FreeRequeueFlag})
	b43upgrading := NewBroker("4.3.6", nil)
	noLimit := Queue{Type: QueueQuorum}
	five := Queue{Type: QueueQuorum, DeliveryLimit: 5, DeliveryLimitSet: true}
	for _, c := range []struct {
		name      string
		q         Queue
		b         Broker
		asks      bool
		dflt      bool
		peeksAt3  int64 // PeeksLeft(3)
		peeksAt20 int64 // PeeksLeft(20)
	}{
		{"3.10, no limit: free", noLimit, b310, false, false, -1, -1},
		{"3.10, limit 5: asks, the read spent one", five, b310, true, false, 1, 0},
		{"4.0, no limit: the default 20 asks", noLimit, b40, true, true, 16, 0},
		{"4.0, limit 5", five, b40, true, false, 1, 0},
		{"4.3, no limit: the release is free, 20 left less the count", noLimit, b43, false, true, 17, 0},
		{"4.3, limit 5", five, b43, false, false, 2, 0},
		{"4.3 without the flag counts like 4.0", noLimit, b43upgrading, true, true, 16, 0},
		{"classic", Queue{Type: QueueClassic}, b40, false, false, -1, -1},
	} {
		cost := DeliveryCostOf(c.q, c.b)
		if cost.AsksFirst() != c.asks || cost.Default != c.dflt || cost.PeeksLeft(3) != c.peeksAt3 || cost.PeeksLeft(20) != c.peeksAt20 {
			t.Errorf("%s: %+v asks %v peeks(3) %d peeks(20) %d; want asks %v default %v peeks %d, %d",
				c.name, cost, cost.AsksFirst(), cost.PeeksLeft(3), cost.PeeksLeft(20), c.asks, c.dflt, c.peeksAt3, c.peeksAt20)
		}
	}
}
