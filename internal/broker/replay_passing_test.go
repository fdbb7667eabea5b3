package broker

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
)

// A replay hold keeps only the deliveries it may replay (their base
// identity is a selected id, or one before its occurrence suffix), and
// those in its store on disk; of its own copies it keeps the item id, of
// every other delivery the tag and base id alone (no body, headers or
// properties), and the identities it numbers from those are the ones
// Identify gives. Load gives back a held message exactly as delivered.
func TestReplayHoldKeepsOnDiskOnlyWhatItMayReplay(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ds := []amqp.Delivery{
		{DeliveryTag: 1, MessageId: "a", Body: []byte("1")},
		{DeliveryTag: 2, MessageId: "b", Body: []byte("2")},
		{DeliveryTag: 3, MessageId: "a", Body: []byte("3"), Headers: amqp.Table{"n": int8(-3), "when": time.Unix(1700000000, 0)}, Priority: 4, Exchange: "ex", RoutingKey: "rk"},
		{DeliveryTag: 4, MessageId: "c", Body: []byte("4"), Headers: amqp.Table{triage.HeaderReplayID: "r1", triage.HeaderReplayItem: "c"}},
		{DeliveryTag: 5, MessageId: "d", Body: []byte("5")},
	}
	store, err := newHeldStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.close()
	if entries, _ := os.ReadDir(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "dlqt")); len(entries) != 0 {
		t.Errorf("the hold store left a file name on disk: %v", entries)
	}
	p := newPassing("q", newWanted([]string{"a#2", "d"}), "r1", store)
	for _, d := range ds {
		p.take(d)
	}
	var stored []uint64
	for i, tag := range p.tags {
		if _, ok := p.sums[i]; ok {
			stored = append(stored, tag)
		}
	}
	if !slices.Equal(stored, []uint64{1, 3, 5}) || p.copies[3] != "c" {
		t.Errorf("stored: %v, want 1, 3 (base a), 5 (d); copies %v, want c at 3", stored, p.copies)
	}
	if want := []string{"a", "b", "a", "", "d"}; !slices.Equal(p.bases, want) {
		t.Errorf("bases %v, want %v", p.bases, want)
	}
	r := &Replay{queue: "q", held: &heldSources{want: p.want, refs: make([]heldRef, len(p.want.ids)), store: store, tables: map[string]amqp.Table{}}}
	out := r.sortHeld(p) // p was made for a#2 and d
	var got []string
	for _, m := range out {
		got = append(got, m.ID)
	}
	if !slices.Equal(got, []string{"c", "a#2", "d"}) || !out[0].Copy {
		t.Errorf("held %v", out)
	}
	if ref, _, _ := r.held.ref("a#2"); ref.tag != 3 || out[1].BodySHA256 != triage.BodySHA256([]byte("3")) {
		t.Errorf("a#2 is tag %d with body sha %s, want tag 3, the sha of body 3", ref.tag, out[1].BodySHA256)
	}
	if _, err := store.get(0); err == nil {
		t.Errorf("the first a (not selected) is still in the store")
	}
	m, err := r.Load(context.Background(), "a#2")
	if err != nil {
		t.Fatal(err)
	}
	if want := toMessage(ds[2], "q", 2); !reflect.DeepEqual(m, want) {
		t.Errorf("loaded %+v\nwant   %+v", m, want)
	}
	if tb := r.deliveredTable("a#2", m.Headers); tb["n"] != int8(-3) {
		t.Errorf("republished header n is %T %v, want int8 -3 as delivered", tb["n"], tb["n"])
	}
	if _, err := r.Load(context.Background(), "b"); err == nil {
		t.Error("Load of a message the hold does not hold gave no error")
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
