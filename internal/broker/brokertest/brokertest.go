// Package brokertest gives integration tests a vhost of their own on the real
// local broker, deleted when the test ends. Tests never touch vhost "/".
package brokertest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
)

// Env returns the broker the tests talk to: DLQT_TEST_AMQP_URL and
// DLQT_TEST_MGMT_URL, else the local broker with guest/guest.
func Env() broker.Config {
	c := broker.Config{AMQPURL: broker.DefaultAMQPURL, MgmtURL: broker.DefaultMgmtURL}
	if v := os.Getenv("DLQT_TEST_AMQP_URL"); v != "" {
		c.AMQPURL = v
	}
	if v := os.Getenv("DLQT_TEST_MGMT_URL"); v != "" {
		c.MgmtURL = v
	}
	return c
}

// SkipShort skips a test that needs the broker when go test runs with
// -short (make unit). It is the one place that decides so: NewVhost calls it,
// and so does any fixture that creates its vhost another way.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs RabbitMQ; -short skips the broker integration tests (make test runs them)")
	}
}

// NewVhost creates a uniquely named vhost (dlqt-test-<prefix>-<random>) and
// deletes it in t.Cleanup. Under -short the test is skipped (SkipShort);
// otherwise a broker that does not answer fails it.
func NewVhost(t testing.TB, prefix string) broker.Config {
	t.Helper()
	SkipShort(t)
	c := Env()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	c.Vhost = "dlqt-test-" + prefix + "-" + hex.EncodeToString(b[:])
	if err := broker.CreateVhost(c); err != nil {
		t.Fatalf("the integration tests need RabbitMQ with the management plugin (start it with `make prepare` or `bash .ci/prepare`): %v", err)
	}
	t.Cleanup(func() { deleteVhost(t, c) })
	return c
}

// deleteVhost deletes a test's vhost. The broker deletes a vhost's queues
// with it, which for 100,000 messages on a 4.0 node busy with other tests
// took longer than the management client's 10 s (a cleanup error that
// failed a test that had passed): so a longer timeout, and one more DELETE
// (a 404 once the first finished) when the first request timed out anyway.
func deleteVhost(t testing.TB, c broker.Config) {
	c.Timeout = 2 * time.Minute
	err := broker.DeleteVhost(c)
	if err != nil {
		err = broker.DeleteVhost(c)
	}
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
}
