package broker

import (
	"errors"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// closeWait bounds connection.close. A connection the broker blocks (a
// resource alarm) is no longer read by it, so its close-ok never comes and
// a plain Close waits forever; past the deadline the socket is closed
// anyway, and the broker requeues what the connection held.
const closeWait = 3 * time.Second

// closeConn closes c within closeWait. A close-ok that never came is not an
// error: the socket is gone either way.
func closeConn(c *amqp.Connection) error {
	deadline := time.Now().Add(closeWait)
	err := c.CloseDeadline(deadline)
	if err != nil && !time.Now().Before(deadline) { // amqp091-go wraps the i/o timeout in its own Error
		return nil
	}
	return ignoreClosed(err)
}

// closeConns closes every connection at once, so a close that runs into
// its deadline does not delay the others. A publish stuck in a socket write
// holds the writer until the deadline, so one close can take up to about
// twice closeWait.
func closeConns(cs ...*amqp.Connection) error {
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		if c == nil {
			continue
		}
		wg.Go(func() { errs[i] = closeConn(c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func ignoreClosed(err error) error {
	if errors.Is(err, amqp.ErrClosed) {
		return nil
	}
	return err
}
