package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/demo"
)

// The scenarios take a few seconds to settle on the broker, so the tests of
// package e2e share one loaded vhost, created on first use and deleted when
// the package's tests end. Tests only browse it (which puts every message
// back); the one test that accepts a quorum delivery cost loads its own.
var shared struct {
	once sync.Once
	cfg  broker.Config
	scen demo.Scenarios
	err  error
}

// scenarioVhost returns the shared vhost with the seed scenarios loaded.
func scenarioVhost(t *testing.T) (broker.Config, demo.Scenarios) {
	t.Helper()
	brokertest.SkipShort(t)
	shared.once.Do(func() {
		cfg := brokertest.Env()
		var b [6]byte
		rand.Read(b[:])
		cfg.Vhost = "dlqt-test-main-" + hex.EncodeToString(b[:])
		if err := brokertest.CreateVhost(cfg); err != nil {
			shared.err = fmt.Errorf("the end-to-end tests need RabbitMQ with the management plugin (run .ci/prepare): %w", err)
			return
		}
		cleanups = append(cleanups, func() { brokertest.DeleteVhost(cfg) })
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		shared.cfg = cfg
		shared.scen, shared.err = demo.LoadScenarios(ctx, cfg)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.cfg, shared.scen
}

// cleanups run after every test of the package (see TestMain).
var cleanups []func()

// brokerEnv is an isolated environment pointed at cfg's broker and vhost.
func brokerEnv(t *testing.T, cfg broker.Config) []string {
	return append(isolatedEnv(t),
		"DLQT_AMQP_URL="+cfg.AMQPURL,
		"DLQT_MGMT_URL="+cfg.MgmtURL,
		"DLQT_VHOST="+cfg.Vhost,
	)
}
