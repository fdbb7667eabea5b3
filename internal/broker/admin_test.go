package broker_test

import (
	"testing"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

func TestNewVhostIsCreatedAndUsable(t *testing.T) {
	c := brokertest.NewVhost(t, "admin")
	if c.Vhost == "" || c.Vhost == "/" {
		t.Fatalf("test vhost must be its own, got %q", c.Vhost)
	}
}
