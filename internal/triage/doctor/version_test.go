package doctor

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A quorum parking queue that sets no delivery limit: nothing to say on
// 3.x, RabbitMQ's default of 20 on 4.0 (every browse counts) and on 4.3
// (only a reject, a closed channel or a crash counts).
func TestParkingLosesCoversTheDefaultDeliveryLimit(t *testing.T) {
	for _, c := range []struct {
		broker triage.Broker
		want   []string // in the finding's detail; nil: no finding
	}{
		{triage.NewBroker("3.10.8", nil), nil},
		{triage.NewBroker("3.13.7", nil), nil},
		{triage.NewBroker("4.0.5", nil), []string{"quorum delivery limit 20, RabbitMQ's default from 4.0 on", "every browse or requeue counts"}},
		{triage.NewBroker("4.3.6", []string{triage.FreeRequeueFlag}), []string{"quorum delivery limit 20, RabbitMQ's default", "a requeue is free on this broker, but a reject"}},
	} {
		top := triage.Topology{Vhost: "v", Broker: c.broker, Exchanges: exchanges("work.dlx", "fanout"),
			Queues: []triage.Queue{
				withConsumers(byPolicy("work", "work.dlx"), 1),
				{Name: "work.parking", Type: triage.QueueQuorum},
			},
			Bindings: []triage.Binding{bind("work.dlx", "work.parking", "")}}
		var found *Finding
		for _, f := range diagnose(top) {
			if f.Kind == KindParkingLoses && f.Queue == "work.parking" {
				found = &f
			}
		}
		v := c.broker.Version
		switch {
		case c.want == nil && found != nil:
			t.Errorf("%s: unexpected finding %s", v, found.Detail)
		case c.want != nil && found == nil:
			t.Errorf("%s: no parking-loses-messages finding for the default delivery limit", v)
		case found != nil:
			for _, w := range c.want {
				if !strings.Contains(found.Detail, w) {
					t.Errorf("%s: detail %q lacks %q", v, found.Detail, w)
				}
			}
			if !strings.Contains(found.Fix, `'{"delivery-limit":-1}' --apply-to quorum_queues`) {
				t.Errorf("%s: fix %q does not say how to lift a default limit", v, found.Fix)
			}
		}
	}
}
