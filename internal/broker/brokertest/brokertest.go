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
	if err := CreateVhost(c); err != nil {
		t.Fatalf("the integration tests need RabbitMQ with the management plugin (start it with `make prepare` or `bash .ci/prepare`): %v", err)
	}
	t.Cleanup(func() { deleteVhost(t, c) })
	return c
}

// AdminTimeout is how long a test may wait for the management API to
// create or delete its vhost. Both wait behind the broker's other vhost
// work: deleting a vhost deletes its queues (100,000 messages took longer
// than the client's default 10 s on a 4.0 node busy with other tests), and
// in a make test run with the broker and e2e shards side by side a create
// once waited past 10 s too, failing every e2e test of the shared vhost.
// A test's own setup and cleanup, not dlqt's behaviour: it may wait.
const AdminTimeout = 2 * time.Minute

// CreateVhost creates c.Vhost for a test (broker.CreateVhost), waiting up
// to AdminTimeout.
func CreateVhost(c broker.Config) error {
	c.Timeout = AdminTimeout
	return broker.CreateVhost(c)
}

// DeleteVhost deletes a test's vhost (broker.DeleteVhost), waiting up to
// AdminTimeout, and once more (a 404 once the first finished) when the
// first request timed out anyway.
func DeleteVhost(c broker.Config) error {
	c.Timeout = AdminTimeout
	err := broker.DeleteVhost(c)
	if err != nil {
		err = broker.DeleteVhost(c)
	}
	return err
}

func deleteVhost(t testing.TB, c broker.Config) {
	if err := DeleteVhost(c); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}
