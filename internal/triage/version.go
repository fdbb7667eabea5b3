package triage

import (
	"fmt"
	"strconv"
	"strings"
)

// BrokerVersion is a RabbitMQ version as the management API reports it
// (rabbitmq_version in /api/overview). The zero value is an unknown version:
// an old snapshot, or a broker whose overview could not be read.
type BrokerVersion struct{ Major, Minor, Patch int }

// ParseBrokerVersion reads "4.0.5", "3.13.7+1.g1234" or "4.1.0-rc.1"; text
// that starts with no number is an unknown version.
func ParseBrokerVersion(s string) BrokerVersion {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "+")
	s, _, _ = strings.Cut(s, "-")
	var nums [3]int
	for i, part := range strings.SplitN(s, ".", 3) {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			if i == 0 {
				return BrokerVersion{}
			}
			break
		}
		nums[i] = n
	}
	return BrokerVersion{Major: nums[0], Minor: nums[1], Patch: nums[2]}
}

// Known reports whether the version was read.
func (v BrokerVersion) Known() bool { return v != BrokerVersion{} }

// AtLeast compares a known version with major.minor; an unknown version is
// never at least anything.
func (v BrokerVersion) AtLeast(major, minor int) bool {
	return v.Known() && (v.Major > major || v.Major == major && v.Minor >= minor)
}

func (v BrokerVersion) String() string {
	if !v.Known() {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// MarshalText writes "4.0.5" ("" when unknown), so JSON shows a version as
// the broker spells it.
func (v BrokerVersion) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

func (v *BrokerVersion) UnmarshalText(b []byte) error {
	*v = ParseBrokerVersion(string(b))
	return nil
}

// Broker is what dlqt knows of the broker a topology was read from.
type Broker struct {
	Version BrokerVersion `json:"version,omitzero"`
	// FreeRequeue: dlqt's own release (basic.nack with requeue) does not
	// count toward a quorum queue's delivery limit. True from RabbitMQ 4.3
	// once feature flag rabbitmq_4.3.0 is enabled, which needs every node of
	// the cluster on 4.3; a reject, a channel close and a crash still count.
	FreeRequeue bool `json:"free_requeue,omitempty"`
}

// FreeRequeueFlag is the feature flag that proves the whole cluster runs
// the 4.3 quorum queue, whose requeue is free.
const FreeRequeueFlag = "rabbitmq_4.3.0"

// NewBroker derives what dlqt needs from the version string and the names
// of the enabled feature flags (nil when they could not be read).
func NewBroker(version string, enabledFlags []string) Broker {
	b := Broker{Version: ParseBrokerVersion(version)}
	if b.Version.AtLeast(4, 3) {
		for _, f := range enabledFlags {
			b.FreeRequeue = b.FreeRequeue || f == FreeRequeueFlag
		}
	}
	return b
}

// DefaultDeliveryLimit is the delivery limit of a quorum queue that sets
// none, from RabbitMQ 4.0 on.
const DefaultDeliveryLimit = 20

// ResolveDeliveryLimit combines a quorum queue's x-delivery-limit argument
// and its policy's delivery-limit as the broker does: the lower of the two,
// except that from 4.0 a negative value means "no limit" and yields to the
// other (rabbit_quorum_queue:resolve_delivery_limit/2 takes the max when
// either is negative). ok is false when neither is set.
func ResolveDeliveryLimit(arg, policy int64, hasArg, hasPolicy bool, v BrokerVersion) (limit int64, ok bool) {
	switch {
	case hasArg && hasPolicy:
		if v.AtLeast(4, 0) && (arg < 0 || policy < 0) {
			return max(arg, policy), true
		}
		return min(arg, policy), true
	case hasArg:
		return arg, true
	case hasPolicy:
		return policy, true
	}
	return 0, false
}

// EffectiveDeliveryLimit is the delivery limit a quorum queue applies on
// broker version v; limited is false when it has none (other queue types,
// no limit set before 4.0, a negative limit from 4.0 on).
//
//   - An explicit limit (q.DeliveryLimit, or q.DeliveryLimitSet for 0) wins.
//     A negative one disables the limit from 4.0; before 4.0 it dead-letters
//     on the first return, like 0 (measured on 3.10.8: -1 dead-lettered a
//     message on its first requeue).
//   - Without one, 4.0 and later apply DefaultDeliveryLimit. An unknown
//     version is taken for 4.0 or later: assuming a limit asks once too often,
//     assuming none can lose messages.
func EffectiveDeliveryLimit(q Queue, v BrokerVersion) (limit int64, limited bool) {
	if q.Type != QueueQuorum {
		return 0, false
	}
	if q.DeliveryLimitSet || q.DeliveryLimit != 0 {
		switch {
		case q.DeliveryLimit >= 0:
			return q.DeliveryLimit, true
		case v.AtLeast(4, 0):
			return 0, false
		}
		return 0, true
	}
	if v.Known() && !v.AtLeast(4, 0) {
		return 0, false
	}
	return DefaultDeliveryLimit, true
}

// DeliveryCost is what reading a queue costs its messages.
type DeliveryCost struct {
	Limit   int64 // the effective delivery limit, when Limited
	Limited bool
	// Default: no argument or policy set Limit, the broker's default did.
	Default bool
	// RequeueCounts: dlqt's own release adds one to each read message's
	// delivery count (every version before 4.3). When false, only a crash or
	// a channel closed with messages held counts.
	RequeueCounts bool
}

// DeliveryCostOf says what a read of q costs on broker b.
func DeliveryCostOf(q Queue, b Broker) DeliveryCost {
	limit, limited := EffectiveDeliveryLimit(q, b.Version)
	return DeliveryCost{
		Limit:         limit,
		Limited:       limited,
		Default:       limited && !q.DeliveryLimitSet && q.DeliveryLimit == 0,
		RequeueCounts: limited && !b.FreeRequeue,
	}
}

// AsksFirst reports whether a read must have the user's consent: it adds
// to delivery counts that the queue acts on.
func (c DeliveryCost) AsksFirst() bool { return c.Limited && c.RequeueCounts }

// PeeksLeft is how many more counted deliveries a message read with
// x-delivery-count count (a missing header reads as 0) survives before the
// queue dead-letters or drops it: the broker lets it go when a return takes
// the count past the limit. Where the release counts, the read that showed
// count has already spent one of them. Never below 0.
func (c DeliveryCost) PeeksLeft(count int) int64 {
	if !c.Limited {
		return -1
	}
	left := c.Limit - int64(count)
	if c.RequeueCounts {
		left--
	}
	return max(left, 0)
}
