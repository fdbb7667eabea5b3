package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// TestATimestampPastTheYear9999IsKept: a message whose timestamp property
// and a timestamp header say the year 10000 (a publisher's bug; AMQP
// allows any uint64 of seconds) made dlqt snapshot exit 1 with no file
// ("year outside of range [0,9999]"). The snapshot is written and reads
// back with the property as it was; messages --json writes the message.
func TestATimestampPastTheYear9999IsKept(t *testing.T) {
	isolate(t)
	far := time.Unix(253402300800+86400, 0).UTC() // 10000-01-02
	cfg, conn, ch := parkingQueue(t, "clifartime")
	for _, id := range []string{"far", "near"} {
		p := amqp.Publishing{MessageId: id, ContentType: "application/json", Body: []byte(`{"ok":1}`)}
		if id == "far" {
			p.Timestamp, p.Headers = far, amqp.Table{"x-published-at": far}
		}
		if err := ch.PublishWithContext(context.Background(), "", "parking", false, false, p); err != nil {
			t.Fatal(err)
		}
	}
	brokertest.WaitDepth(t, conn, "parking", 2)
	flags := []string{"--amqp-url", cfg.AMQPURL, "--mgmt-url", cfg.MgmtURL, "--vhost", cfg.Vhost}

	path := filepath.Join(t.TempDir(), "far.json.gz")
	if _, errOut, code := run(t, Assets{}, append(flags, "snapshot", "parking", "--out", path, "--raw", "--yes")...); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	s, err := broker.OpenSnapshot(path)
	if err != nil {
		t.Fatalf("the snapshot does not open: %v", err)
	}
	all, err := s.ReadAll()
	if err != nil || len(all.Batches) != 1 || len(all.Batches[0].Messages) != 2 {
		t.Fatalf("the snapshot reads back %+v, %v", all.Batches, err)
	}
	m := all.Batches[0].Messages[0]
	if m.Properties.MessageID != "far" || !m.Properties.Timestamp.Equal(far) {
		t.Errorf("message %q: timestamp %v, want %v", m.Properties.MessageID, m.Properties.Timestamp, far)
	}
	// A header keeps the text dlqt reads such a time as (broker.timeValue;
	// a replay republishes the delivered table, timestamp and all).
	if h := m.Headers["x-published-at"]; h != "timestamp out of range: 253402387200 seconds since 1970" {
		t.Errorf("header x-published-at read back as %#v", h)
	}
	brokertest.WaitDepth(t, conn, "parking", 2)

	out, errOut, code := run(t, Assets{}, append(flags, "messages", "parking", "--json")...)
	if code != 0 {
		t.Fatalf("messages --json: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var row map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &row) != nil || row["id"] != "far" {
		t.Fatalf("messages --json wrote %q", out)
	}
}
