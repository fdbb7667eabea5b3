package broker

import (
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// A replay hold keeps whole only the deliveries it may replay (their base
// identity is a selected id, or one before its occurrence suffix) and its
// own copies; of every other one it keeps the tag and base id alone (no
// body, headers or properties), and
// the identities it numbers from those are the ones Identify gives.
func TestReplayHoldKeepsBodiesOnlyOfWhatItMayReplay(t *testing.T) {
	ds := []amqp.Delivery{
		{DeliveryTag: 1, MessageId: "a", Body: []byte("1")},
		{DeliveryTag: 2, MessageId: "b", Body: []byte("2")},
		{DeliveryTag: 3, MessageId: "a", Body: []byte("3")},
		{DeliveryTag: 4, MessageId: "c", Body: []byte("4"), Headers: amqp.Table{triage.HeaderReplayID: "r1", triage.HeaderReplayItem: "c"}},
		{DeliveryTag: 5, MessageId: "d", Body: []byte("5")},
	}
	p := newPassing("q", []string{"a#2", "d"}, "r1")
	for _, d := range ds {
		p.take(d)
	}
	var whole []uint64
	for i, tag := range p.tags {
		if p.whole[i] != nil {
			whole = append(whole, tag)
		}
	}
	if !slices.Equal(whole, []uint64{1, 3, 4, 5}) {
		t.Errorf("kept whole: %v, want 1, 3 (base a), 4 (a copy), 5 (d)", whole)
	}
	if want := []string{"a", "b", "a", "", "d"}; !slices.Equal(p.bases, want) {
		t.Errorf("bases %v, want %v", p.bases, want)
	}
	r := &Replay{held: &heldSources{tags: map[string]uint64{}, tables: map[string]amqp.Table{}}}
	out, put := r.sortHeld(p, "q", []string{"a#2", "d"})
	var got []string
	for _, m := range out {
		got = append(got, m.ID)
	}
	if !slices.Equal(got, []string{"c", "a#2", "d"}) || !slices.Equal(put, []uint64{4, 1, 2}) {
		t.Errorf("held %v, put back %v", got, put)
	}
	if r.held.tags["a#2"] != 3 || string(out[1].Message.Body) != "3" {
		t.Errorf("a#2 is tag %d with body %q, want tag 3, body 3", r.held.tags["a#2"], out[1].Message.Body)
	}
}
