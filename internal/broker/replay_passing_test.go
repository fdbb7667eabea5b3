package broker

import (
	"slices"
	"strings"
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
	out := r.sortHeld(p, "q", []string{"a#2", "d"})
	var got []string
	for _, m := range out {
		got = append(got, m.ID)
	}
	if !slices.Equal(got, []string{"c", "a#2", "d"}) {
		t.Errorf("held %v", got)
	}
	if r.held.tags["a#2"] != 3 || string(out[1].Message.Body) != "3" {
		t.Errorf("a#2 is tag %d with body %q, want tag 3, body 3", r.held.tags["a#2"], out[1].Message.Body)
	}
}

// baseID takes a short cut when a delivery has a message id; whatever the
// id, it gives the identity BaseIDs gives the whole message.
func TestBaseIDIsBaseIDsOfTheWholeMessage(t *testing.T) {
	for _, d := range []amqp.Delivery{
		{MessageId: "m-1", Body: []byte(`{"message_id":"env-1"}`)},
		{MessageId: "  m-2\t", Body: []byte("x")},
		{MessageId: "   ", Body: []byte(`{"message_id":"env-3"}`)},
		{MessageId: "\x1b\x07", Body: []byte("y")},
		{MessageId: "sha256:looks-like-a-hash", Body: []byte("z")},
		{Body: []byte(`{"message_id":"env-6"}`)},
		{Body: []byte("no id at all"), Headers: amqp.Table{"k": "v"}},
		{MessageId: strings.Repeat("long", 200)},
	} {
		m := toMessage(d, "q", 0)
		want := triage.BaseIDs([]triage.Message{m}, []triage.Envelope{triage.DecodeEnvelope(d.Body)})[0]
		if got := baseID(d, "q"); got != want {
			t.Errorf("message id %q: baseID %q, BaseIDs %q", d.MessageId, got, want)
		}
	}
}
