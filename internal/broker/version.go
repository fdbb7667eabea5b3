package broker

import (
	"context"

	"github.com/dlqt/dlqt/internal/triage"
)

// broker reads what decides delivery costs on this broker: its version from
// /api/overview and its enabled feature flags from /api/feature-flags, both
// open to any management user. It is read once per Live; a broker that
// cannot say is an unknown version, which triage treats with care.
func (l *Live) broker(ctx context.Context) triage.Broker {
	l.mu.Lock()
	if l.known != nil {
		defer l.mu.Unlock()
		return *l.known
	}
	l.mu.Unlock()

	var overview struct {
		Version string `json:"rabbitmq_version"`
	}
	if err := l.mgmt.get(ctx, "overview?columns=rabbitmq_version", &overview); err != nil {
		return triage.Broker{}
	}
	var flags []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	var enabled []string
	if err := l.mgmt.get(ctx, "feature-flags", &flags); err == nil {
		for _, f := range flags {
			if f.State == "enabled" {
				enabled = append(enabled, f.Name)
			}
		}
	}
	b := triage.NewBroker(overview.Version, enabled)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known = &b
	return b
}
