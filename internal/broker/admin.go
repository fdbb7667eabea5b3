package broker

import (
	"fmt"
	"net/http"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The functions here serve tools that set a broker up rather than read it:
// the tests and `dlqt demo load`. dlqt's own read and replay paths never
// call them.

// ManagementClient is a rabbit-hole client for c's management API, with c's
// credentials and timeout.
func (c Config) ManagementClient() (*rabbithole.Client, error) { return c.management() }

// DialVhost opens a plain AMQP connection to c.Vhost, giving up after c's
// timeout. The caller owns it and closes it.
func (c Config) DialVhost() (*amqp.Connection, error) {
	cc, err := c.Connect()
	if err != nil {
		return nil, err
	}
	u, cfg, err := cc.AMQP(0, "dlqt admin")
	if err != nil {
		return nil, err
	}
	conn, err := amqp.DialConfig(u, cfg)
	if err != nil {
		return nil, explainAMQP(err, cc, 0)
	}
	return conn, nil
}

// CreateVhost creates c.Vhost and grants the management user full rights in
// it. Used by tests and by `make demo`; dlqt itself never creates vhosts.
func CreateVhost(c Config) error {
	rh, err := c.management()
	if err != nil {
		return err
	}
	if _, err := rh.PutVhost(c.Vhost, rabbithole.VhostSettings{Description: "created by dlqt"}); err != nil {
		return fmt.Errorf("create vhost %q: %w", c.Vhost, err)
	}
	user := rh.Username
	perms := rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}
	if _, err := rh.UpdatePermissionsIn(c.Vhost, user, perms); err != nil {
		return fmt.Errorf("grant %s on vhost %q: %w", user, c.Vhost, err)
	}
	return nil
}

// DeleteVhost deletes c.Vhost; a vhost that is already gone is not an error.
func DeleteVhost(c Config) error {
	rh, err := c.management()
	if err != nil {
		return err
	}
	res, err := rh.DeleteVhost(c.Vhost)
	if res != nil && res.StatusCode == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete vhost %q: %w", c.Vhost, err)
	}
	return nil
}
