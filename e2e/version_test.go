package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// brokerOf reads what dlqt knows of the broker behind cfg, so a test can
// assert what that version does (make test-compat runs 3.10, 4.0 and 4.3).
func brokerOf(t *testing.T, cfg broker.Config) triage.Broker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	top, err := l.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return top.Broker
}
