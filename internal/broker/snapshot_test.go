package broker_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	amqp "github.com/rabbitmq/amqp091-go"
)

func sampleSnapshot() broker.SnapshotFile {
	taken := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	msg := func(i int, id string) triage.Message {
		return triage.Message{
			Queue: "orders.dlq", Position: i, Redelivered: i > 0, Exchange: "orders.dlx", RoutingKey: "order.created",
			Properties: triage.Properties{MessageID: id, ContentType: "application/json", DeliveryMode: 2,
				Timestamp: time.Date(2026, 11, 29, 8, 0, i, 0, time.UTC)},
			Headers: sampleHeaders(),
			Body:    []byte(`{"message_id":"` + id + `","card":"4111111111111111"}`),
		}
	}
	return broker.SnapshotFile{
		Format:  broker.SnapshotFormat,
		Source:  "127.0.0.1:5672 vhost shop",
		TakenAt: taken,
		Topology: triage.Topology{
			Vhost: "shop",
			Queues: []triage.Queue{
				{Name: "orders.work", Type: "classic", Arguments: triage.Headers{"x-dead-letter-exchange": "orders.dlx", "x-message-ttl": int64(60000)},
					DeadLetterExchange: "orders.dlx", HasDeadLetterExchange: true, MessageTTL: 60000},
				{Name: "orders.dlq", Type: "quorum", Messages: 3, Arguments: triage.Headers{"x-queue-type": "quorum"}, PublishRate: 0.4,
					HeadPublished: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)},
			},
			Exchanges: []triage.Exchange{{Name: "", Type: "direct"}, {Name: "orders.dlx", Type: "fanout"}},
			Bindings: []triage.Binding{
				{Source: "orders.dlx", Destination: "orders.dlq", DestinationType: "queue"},
				{Source: "match", Destination: "orders.dlq", DestinationType: "queue", Arguments: triage.Headers{"x-match": "all", "v": int64(2)}},
			},
		},
		Batches: []triage.Batch{{
			Vhost: "shop", Queue: "orders.dlq", Depth: 3, Limit: 10000, TakenAt: taken,
			Messages: []triage.Message{msg(0, "a"), msg(1, "b"), msg(2, "c")},
		}},
	}
}

func TestSnapshotRoundTripKeepsEveryType(t *testing.T) {
	want := sampleSnapshot()
	var buf bytes.Buffer
	if err := broker.WriteSnapshot(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := broker.ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the snapshot\ngot  %#v\nwant %#v", got, want)
	}
	h := got.Batches[0].Messages[0].Headers
	if _, ok := h["x-retry-count"].(int64); !ok {
		t.Errorf("an int64 header came back as %T", h["x-retry-count"])
	}
	if _, ok := h["whole-float"].(float64); !ok {
		t.Errorf("a whole float64 header came back as %T", h["whole-float"])
	}
	if !reflect.DeepEqual(sampleSnapshot(), want) {
		t.Error("WriteSnapshot changed its argument")
	}
}

func TestSnapshotFileIsGzippedAndOpensAsAReader(t *testing.T) {
	want := sampleSnapshot()
	for _, name := range []string{"shop.json", "shop.json.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			if err := broker.WriteSnapshotFile(path, want); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(path)
			if gz := raw[0] == 0x1f && raw[1] == 0x8b; !gz {
				t.Errorf("%s is not gzip-compressed", name)
			}
			s, err := broker.OpenSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			if all, err := s.ReadAll(); err != nil || !reflect.DeepEqual(all, want) {
				t.Fatal("the file does not read back as written")
			}
			if d := s.Describe(); d != "snapshot "+path+" (taken 2026-11-30 10:00 UTC)" {
				t.Errorf("Describe = %q", d)
			}
			top, err := s.Topology(context.Background())
			if err != nil || !reflect.DeepEqual(top, want.Topology) {
				t.Errorf("Topology = %+v, %v", top, err)
			}
		})
	}
}

func TestSnapshotBrowseTrimsToTheLimitAndKeepsTheDepth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := broker.WriteSnapshotFile(path, sampleSnapshot()); err != nil {
		t.Fatal(err)
	}
	s, err := broker.OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	var progress []int
	b, err := s.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{Limit: 2, Progress: func(read, _ int) { progress = append(progress, read) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(b.Messages); !slices.Equal(got, []string{"a", "b"}) || b.Depth != 3 || b.Limit != 2 || !b.Truncated() {
		t.Errorf("batch ids %v depth %d limit %d", got, b.Depth, b.Limit)
	}
	if !slices.Equal(progress, []int{2}) {
		t.Errorf("progress = %v", progress)
	}
	all, _ := s.Browse(context.Background(), "orders.dlq", triage.BrowseOptions{})
	if len(all.Messages) != 3 || all.Limit != 10000 {
		t.Errorf("unbounded browse: %d messages, limit %d", len(all.Messages), all.Limit)
	}

	_, err = s.Browse(context.Background(), "payments.dlq", triage.BrowseOptions{})
	if !errors.Is(err, triage.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if want := `queue "payments.dlq" is not in snapshot ` + path + ` (it has only "orders.dlq")`; err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
}

func TestOpenSnapshotRejectsWhatIsNotOne(t *testing.T) {
	dir := t.TempDir()
	var good bytes.Buffer
	if err := broker.WriteSnapshot(&good, sampleSnapshot()); err != nil {
		t.Fatal(err)
	}
	badType := strings.Replace(good.String(), `"int":"3"`, `"int":3`, 1)
	if badType == good.String() {
		t.Fatal("the sample has no tagged int to corrupt")
	}
	cases := map[string]struct{ content, want string }{
		"garbage.json":   {"this is not json", "not a dlqt snapshot: invalid character 'h' in literal true (expecting 'r')"},
		"truncated.json": {good.String()[:good.Len()/2], "not a dlqt snapshot: queue \"orders.dlq\" message 0: unexpected EOF"},
		"other.json":     {`{"format":"something-else/2"}`, `not a dlqt snapshot: format "something-else/2", want "dlqt-snapshot/1"`},
		"empty.json":     {"", "not a dlqt snapshot: EOF"},
		"badvalue.json":  {badType, "not a dlqt snapshot: queue \"orders.dlq\" message 0: header \"x-death\": [0]: header \"count\": bad int value 3"},
		"bad.json.gz":    {"\x1f\x8bnot really gzip", "not a dlqt snapshot: gzip: invalid header"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := broker.OpenSnapshot(path)
			if err == nil {
				t.Fatal("opened")
			}
			want := "snapshot " + path + ": " + c.want
			if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q\nwant  %q", err, want)
			}
		})
	}
	_, err := broker.OpenSnapshot(filepath.Join(dir, "missing.json"))
	if want := "snapshot " + filepath.Join(dir, "missing.json") + ": no such file or directory"; err == nil || err.Error() != want || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestCaptureFromTheBrokerReadsBackTheSame(t *testing.T) {
	f := newFixture(t, "capture")
	f.declare("a.dlq", nil)
	f.declare("b.dlq", nil)
	f.publish("a.dlq", 5, 0)
	f.publish("b.dlq", 3, 0)
	l := f.live()

	s, err := broker.Capture(context.Background(), l, []string{"a.dlq", "b.dlq"}, triage.BrowseOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if s.Format != broker.SnapshotFormat || s.Source != l.Describe() || s.TakenAt.IsZero() || s.Topology.Vhost != f.cfg.Vhost {
		t.Errorf("file = %q %q %v %q", s.Format, s.Source, s.TakenAt, s.Topology.Vhost)
	}
	if len(s.Batches) != 2 || len(s.Batches[0].Messages) != 4 || s.Batches[0].Depth != 5 || len(s.Batches[1].Messages) != 3 {
		t.Fatalf("batches = %+v", s.Batches)
	}
	path := filepath.Join(t.TempDir(), "capture.json.gz")
	if err := broker.WriteSnapshotFile(path, s); err != nil {
		t.Fatal(err)
	}
	snap, err := broker.OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"a.dlq", "b.dlq"} {
		live, err := l.Browse(context.Background(), q, triage.BrowseOptions{Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		off, err := snap.Browse(context.Background(), q, triage.BrowseOptions{Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(messageIDs(live.Messages), messageIDs(off.Messages)) || live.Depth != off.Depth {
			t.Errorf("%s: live %v/%d, snapshot %v/%d", q, messageIDs(live.Messages), live.Depth, messageIDs(off.Messages), off.Depth)
		}
		if len(off.Messages) > 0 && !reflect.DeepEqual(off.Messages[0].Headers, live.Messages[0].Headers) {
			t.Errorf("%s: headers %#v, live %#v", q, off.Messages[0].Headers, live.Messages[0].Headers)
		}
	}
	f.waitDepth("a.dlq", 5)
	f.waitDepth("b.dlq", 3)

	_, err = broker.Capture(context.Background(), l, []string{"a.dlq", "nope"}, triage.BrowseOptions{})
	if !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("capture of a missing queue: %v", err)
	}
}

// A header whose key or value is not valid UTF-8 (AMQP's strings are
// bytes) comes back from a snapshot file byte for byte, at the top level
// and inside a table; JSON alone would have turned the bad bytes into
// U+FFFD.
func TestSnapshotKeepsHeaderBytesThatAreNotUTF8(t *testing.T) {
	f := newFixture(t, "bytes")
	f.declare("raw.dlq", nil)
	f.publishOne("", "raw.dlq", amqp.Publishing{MessageId: "raw-1", Body: []byte(`{}`),
		Headers: amqp.Table{"\xffkey": "\xfevalue", "table": amqp.Table{"\xc3": "x"}, "plain": "é"}})
	l := f.live()
	s, err := broker.Capture(context.Background(), l, []string{"raw.dlq"}, triage.BrowseOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bytes.json.gz")
	if err := broker.WriteSnapshotFile(path, s); err != nil {
		t.Fatal(err)
	}
	snap, err := broker.OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	off, err := snap.Browse(context.Background(), "raw.dlq", triage.BrowseOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := triage.Headers{"\xffkey": "\xfevalue", "table": triage.Headers{"\xc3": "x"}, "plain": "é"}
	if len(off.Messages) != 1 || !reflect.DeepEqual(off.Messages[0].Headers, want) {
		t.Fatalf("headers from the snapshot: %#v, want %#v", off.Messages, want)
	}
	f.waitDepth("raw.dlq", 1)
}
