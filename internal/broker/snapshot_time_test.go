package broker_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// An AMQP timestamp is any uint64 of seconds: a publisher's bug can set
// one past the year 9999, which RFC 3339 (and encoding/json's time.Time)
// cannot write. WriteSnapshot failed on such a timestamp property ("year
// outside of range [0,9999]") and dlqt snapshot left no file. The message
// is kept, its property, a header and the queue's head timestamp as they
// were, and each reads back equal.
func TestSnapshotKeepsTimestampsPastTheYear9999(t *testing.T) {
	for _, at := range []time.Time{
		time.Unix(253402300800, 0).UTC(),              // 10000-01-01
		time.Unix(1<<62, 0).UTC(),                     // far past it
		time.Unix(-(1 << 62), 0).UTC(),                // a uint64 past int64, as amqp091 decodes it
		time.Unix(253402300800, 5e8).UTC(),            // with a fraction
		time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC), // in range: RFC 3339, as before
	} {
		t.Run(at.String(), func(t *testing.T) {
			want := sampleSnapshot()
			m := &want.Batches[0].Messages[1]
			m.Properties.Timestamp = at
			m.Headers["x-published-at"] = at
			want.Topology.Queues[1].HeadPublished = at
			var buf bytes.Buffer
			if err := broker.WriteSnapshot(&buf, want); err != nil {
				t.Fatalf("WriteSnapshot: %v", err)
			}
			got, err := broker.ReadSnapshot(&buf)
			if err != nil {
				t.Fatalf("ReadSnapshot: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				gm := got.Batches[0].Messages[1]
				t.Fatalf("the round trip changed it: timestamp %v, header %#v, head %v; want %v",
					gm.Properties.Timestamp, gm.Headers["x-published-at"], got.Topology.Queues[1].HeadPublished, at)
			}
		})
	}
	_ = triage.Properties{}
}
