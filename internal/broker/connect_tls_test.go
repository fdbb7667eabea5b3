package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/broker/connect"
)

// Issue 19 against real TLS brokers: one private node that requires a
// client certificate on AMQPS and on the management API (with a path
// prefix and OAuth2), and one that only verifies a certificate a client
// sends. Every error any case meets is kept and, at the end, searched for
// the nodes' password and tokens: none may carry them.
func TestConnectTLSNodes(t *testing.T) {
	nodes := privnode.StartTLSNodes(t,
		privnode.TLSOptions{RequireClientCert: true, PathPrefix: "/rabbitmq", OAuth2: true},
		privnode.TLSOptions{})
	strict, open := nodes[0], nodes[1]
	dir := t.TempDir()
	var errs []error
	var secrets []string
	keep := func(err error) error {
		if err != nil {
			errs = append(errs, err)
		}
		return err
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pwFile := write("strict.pw", strict.Password)
	openPwFile := write("open.pw", open.Password)
	secrets = append(secrets, strict.Password, open.Password)
	mtls := connect.TLS{CAFile: strict.CAFile, CertFile: strict.CertFile, KeyFile: strict.KeyFile}
	dial := func(t *testing.T, c broker.Config) (*broker.Live, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l, err := broker.Dial(ctx, c)
		return l, keep(err)
	}
	mustRead := func(t *testing.T, c broker.Config) {
		t.Helper()
		l, err := dial(t, c)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if _, err := l.Topology(context.Background()); err != nil {
			t.Fatal(keep(err))
		}
	}
	wantErr := func(t *testing.T, err error, parts ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error, want one saying %q", parts)
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not say %q", err, p)
			}
		}
	}

	t.Run("mTLS with a password file", func(t *testing.T) {
		mustRead(t, broker.Config{AMQPURL: strict.AMQPSURL, MgmtURL: strict.MgmtsURL, TLS: mtls,
			Auth: connect.Auth{User: strict.PasswordUser, PasswordFile: pwFile}, Timeout: 10 * time.Second})
	})

	t.Run("a private CA only", func(t *testing.T) {
		mustRead(t, broker.Config{AMQPURL: open.AMQPSURL, MgmtURL: open.MgmtsURL, TLS: connect.TLS{CAFile: open.CAFile},
			Auth: connect.Auth{User: open.PasswordUser, PasswordFile: openPwFile}})
	})

	t.Run("no CA set says tls.ca_file", func(t *testing.T) {
		_, err := dial(t, broker.Config{AMQPURL: open.AMQPSURL, MgmtURL: open.MgmtsURL,
			Auth: connect.Auth{User: open.PasswordUser, PasswordFile: openPwFile}})
		wantErr(t, err, "management API at "+open.MgmtsURL, "tls.ca_file", "--tls-ca-file")
		_, err = broker.Config{AMQPURL: open.AMQPSURL, MgmtURL: open.MgmtsURL,
			Auth: connect.Auth{User: open.PasswordUser, PasswordFile: openPwFile}}.DialVhost()
		wantErr(t, keep(err), fmt.Sprintf("AMQP at 127.0.0.1:%d", open.AMQPSPort), "tls.ca_file")
	})

	t.Run("no client certificate says tls.cert_file", func(t *testing.T) {
		c := broker.Config{AMQPURL: strict.AMQPSURL, MgmtURL: strict.MgmtsURL, TLS: connect.TLS{CAFile: strict.CAFile},
			Auth: connect.Auth{User: strict.PasswordUser, PasswordFile: pwFile}}
		_, err := dial(t, c)
		wantErr(t, err, "client certificate", "tls.cert_file")
		conn, err := c.DialVhost()
		if err == nil {
			conn.Close()
		}
		wantErr(t, keep(err), "AMQP at", "client certificate", "tls.cert_file")
	})

	t.Run("EXTERNAL logs in with the certificate", func(t *testing.T) {
		c := broker.Config{AMQPURL: strict.AMQPSURL, MgmtURL: strict.MgmtsURL, TLS: mtls,
			Auth: connect.Auth{Mechanism: "external", User: strict.PasswordUser, PasswordFile: pwFile}}
		l, err := dial(t, c)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		user, mech := amqpLogin(t, strict, "dlqt browse")
		if user != strict.ClientUser || mech != "EXTERNAL" {
			t.Errorf("the node lists dlqt's connection as %q by %q, want %q by EXTERNAL", user, mech, strict.ClientUser)
		}
	})

	t.Run("OAuth2 token file, re-read on a 401 and refused once expired", func(t *testing.T) {
		short := strict.Token(3 * time.Second)
		fresh := strict.Token(time.Hour)
		expired := strict.Token(-time.Minute)
		secrets = append(secrets, short, fresh, expired)
		tokFile := write("token", short)
		c := broker.Config{AMQPURL: strict.AMQPSURL, MgmtURL: strict.MgmtsURL, TLS: mtls, Auth: connect.Auth{TokenFile: tokFile}}
		l, err := dial(t, c)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		time.Sleep(4 * time.Second) // the token dlqt holds has expired
		write("token", fresh)
		if _, err := l.Topology(context.Background()); err != nil {
			t.Fatalf("after the token was replaced: %v", keep(err))
		}
		write("token", expired)
		_, err = dial(t, c)
		wantErr(t, err, "the OAuth2 token expired at")
		wrongAudience := strict.TokenWith(map[string]any{"sub": strict.TokenUser, "aud": []string{"elsewhere"}, "scope": "elsewhere.read:*/*",
			"exp": time.Now().Add(time.Hour).Unix()})
		secrets = append(secrets, wrongAudience)
		write("token", wrongAudience)
		_, err = dial(t, c)
		wantErr(t, err, "refused the OAuth2 token")
	})

	t.Run("the path prefix is asked for", func(t *testing.T) {
		_, err := dial(t, broker.Config{AMQPURL: strict.AMQPSURL, MgmtURL: strings.TrimSuffix(strict.MgmtsURL, "/rabbitmq"), TLS: mtls,
			Auth: connect.Auth{User: strict.PasswordUser, PasswordFile: pwFile}})
		wantErr(t, err, "404", "path prefix", "/rabbitmq")
	})

	t.Run("amqp:// to the TLS port asks whether it is an amqps:// port", func(t *testing.T) {
		_, err := broker.Config{AMQPURL: fmt.Sprintf("amqp://127.0.0.1:%d/", strict.AMQPSPort), MgmtURL: strict.MgmtsURL, TLS: mtls,
			Auth: connect.Auth{User: strict.PasswordUser, PasswordFile: pwFile}, Timeout: 5 * time.Second}.DialVhost()
		wantErr(t, keep(err), "amqps://")
	})

	t.Run("two management URLs and vhost /", func(t *testing.T) {
		dead := deadAddr(t)
		mustRead(t, broker.Config{AMQPURL: strict.AMQPSURL, MgmtURL: "https://" + dead + "/rabbitmq," + strict.MgmtsURL, Vhost: "/", TLS: mtls,
			Auth: connect.Auth{User: strict.PasswordUser, PasswordFile: pwFile}})
	})

	t.Run("a management node list names the node whose TLS failed", func(t *testing.T) {
		dead := deadAddr(t)
		_, err := dial(t, broker.Config{AMQPURL: open.AMQPSURL, MgmtURL: "https://" + dead + "," + open.MgmtsURL,
			Auth: connect.Auth{User: open.PasswordUser, PasswordFile: openPwFile}})
		wantErr(t, err, fmt.Sprintf("127.0.0.1:%d (", open.MgmtsPort), "tls.ca_file")
	})

	if len(errs) < 8 {
		t.Errorf("only %d errors were met, want the error paths above to have been walked", len(errs))
	}
	for _, err := range errs {
		t.Logf("met: %v", err)
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) || strings.Contains(fmt.Sprintf("%+v", err), s) {
				t.Errorf("an error carries a secret: %v", err)
			}
		}
	}
}

// amqpLogin is the user and SASL mechanism of the node's connection with
// this name, as its management API lists them (statistics take a moment).
func amqpLogin(t *testing.T, n *privnode.TLSNode, name string) (user, mechanism string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: n.ClientTLS(true)}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, n.MgmtsURL+"/api/connections", nil)
		req.SetBasicAuth(n.PasswordUser, n.Password)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var conns []struct {
			User             string         `json:"user"`
			AuthMechanism    string         `json:"auth_mechanism"`
			ClientProperties map[string]any `json:"client_properties"`
		}
		err = json.NewDecoder(res.Body).Decode(&conns)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range conns {
			if c.ClientProperties["connection_name"] == name {
				return c.User, c.AuthMechanism
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no connection named %q on the node", name)
	return "", ""
}

func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
