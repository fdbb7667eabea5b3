package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// The probe a TUI makes as it starts tells a trail it may write from one
// it may not, and leaves nothing on the stream either way.
func TestAuditStreamProbeFindsWhoMayNotWrite(t *testing.T) {
	f := newFixture(t, "probe")
	ctx := context.Background()
	s, err := f.live().OpenAuditStream(ctx, "dlqt.audit", broker.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Probe(ctx); err != nil {
		t.Fatalf("probe with every permission: %v", err)
	}
	if err := s.Write(ctx, []byte(`{"one":"record"}`), "r1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(ctx); err != nil {
		t.Fatalf("a second probe: %v", err)
	}

	as, _ := brokertest.User(t, f.cfg, &brokertest.Perms{Configure: ".*", Write: "^$", Read: ".*"}, "management")
	l, err := broker.Dial(ctx, as)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ro, err := l.OpenAuditStream(ctx, "dlqt.audit", broker.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	err = ro.Probe(ctx)
	if err == nil || !strings.Contains(err.Error(), "ACCESS_REFUSED") || !strings.Contains(err.Error(), "amq.default") {
		t.Fatalf("probe without write: %v, want ACCESS_REFUSED naming amq.default", err)
	}

	var bodies []string
	if _, err := f.live().ReadAuditStream(ctx, "dlqt.audit", func(_ int64, body []byte) error {
		bodies = append(bodies, string(body))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 || bodies[0] != `{"one":"record"}` {
		t.Fatalf("the stream holds %q, want the one record: a probe is never stored", bodies)
	}
}
