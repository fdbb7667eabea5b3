package broker_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest"
	"github.com/dlqt/dlqt/internal/triage"
)

// freePort returns a local port with nothing listening on it.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).AddrPort().String()
}

func withPassword(t *testing.T, raw, pass string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	user := "guest"
	if u.User != nil {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, pass)
	return u.String()
}

func amqpHost(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestDialDescribesTheBroker(t *testing.T) {
	f := newFixture(t, "dial")
	l := f.live()
	u, _ := url.Parse(f.cfg.AMQPURL)
	if want := u.Host + " vhost " + f.cfg.Vhost; l.Describe() != want {
		t.Errorf("Describe = %q, want %q", l.Describe(), want)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	f.declare("after.close", nil)
	if _, err := l.Browse(context.Background(), "after.close", triage.BrowseOptions{}); err == nil {
		t.Error("Browse after Close quietly reopened the connection")
	}
}

func TestDialErrorsAreOneClearLine(t *testing.T) {
	good := brokertest.NewVhost(t, "dialerr")
	const secret = "s3cr3t-not-the-password"
	mgmtPort := freePort(t)
	amqpPort := freePort(t)
	amqpDown := good
	u, _ := url.Parse(good.AMQPURL)
	u.Host = amqpPort
	amqpDown.AMQPURL = u.String()

	cases := []struct {
		name     string
		cfg      broker.Config
		want     string
		refused  bool // nothing listens: the error unwraps to ECONNREFUSED
		notFound bool
	}{
		{
			name: "wrong password",
			cfg:  broker.Config{AMQPURL: withPassword(t, good.AMQPURL, secret), MgmtURL: good.MgmtURL, Vhost: good.Vhost},
			want: "management API: 401 bad credentials for user guest",
		},
		{
			name: "AMQP password differs from the management one",
			cfg:  broker.Config{AMQPURL: withPassword(t, good.AMQPURL, secret), MgmtURL: withPassword(t, good.MgmtURL, "guest"), Vhost: good.Vhost},
			want: "AMQP at " + amqpHost(t, good.AMQPURL) + ": bad credentials for user guest",
		},
		{
			name:     "missing vhost",
			cfg:      broker.Config{AMQPURL: good.AMQPURL, MgmtURL: good.MgmtURL, Vhost: good.Vhost + "-missing"},
			want:     `vhost "` + good.Vhost + `-missing" does not exist`,
			notFound: true,
		},
		{
			name:    "nothing on the management port",
			cfg:     broker.Config{AMQPURL: good.AMQPURL, MgmtURL: "http://" + mgmtPort, Vhost: good.Vhost},
			want:    "management API at http://" + mgmtPort + ": connection refused — is rabbitmq_management enabled?",
			refused: true,
		},
		{
			name: "nothing on either port (the broker is down, or both ports are wrong)",
			cfg:  broker.Config{AMQPURL: amqpDown.AMQPURL, MgmtURL: "http://" + mgmtPort, Vhost: good.Vhost},
			want: "neither AMQP nor the management API answers: AMQP at " + amqpPort + ": connection refused; management API at http://" + mgmtPort +
				": connection refused — is RabbitMQ running there, and are the ports right?",
			refused: true,
		},
		{
			name:    "nothing on the AMQP port",
			cfg:     amqpDown,
			want:    "AMQP at " + amqpPort + ": connection refused — is RabbitMQ running and listening there?",
			refused: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := broker.Dial(context.Background(), c.cfg)
			if err == nil {
				l.Close()
				t.Fatal("Dial succeeded")
			}
			if err.Error() != c.want {
				t.Errorf("err = %q\nwant  %q", err, c.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err leaks the password or spans lines: %q", err)
			}
			if got := errors.Is(err, triage.ErrNotFound); got != c.notFound {
				t.Errorf("errors.Is(err, ErrNotFound) = %v, want %v", got, c.notFound)
			}
			if got := errors.Is(err, syscall.ECONNREFUSED); got != c.refused {
				t.Errorf("errors.Is(err, ECONNREFUSED) = %v, want %v", got, c.refused)
			}
		})
	}
}
