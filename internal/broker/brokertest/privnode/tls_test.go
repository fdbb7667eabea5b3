package privnode_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
)

// One TLS node with everything a production broker asks for proves each
// piece of the harness with plain clients (amqp091 and net/http): the CA,
// the client certificate on both listeners, EXTERNAL, the path prefix, and
// a minted token as AMQP password and as Bearer.
func TestTLSNode(t *testing.T) {
	n := privnode.StartTLS(t, privnode.TLSOptions{RequireClientCert: true, PathPrefix: "/rabbitmq", OAuth2: true})
	if !strings.HasPrefix(n.AMQPSURL, "amqps://127.0.0.1:") || !strings.HasSuffix(n.MgmtsURL, "/rabbitmq") {
		t.Fatalf("URLs %s %s", n.AMQPSURL, n.MgmtsURL)
	}
	t.Logf("RabbitMQ %s", n.Version())
	withCert, caOnly := n.ClientTLS(true), n.ClientTLS(false)

	t.Run("EXTERNAL with the client certificate", func(t *testing.T) {
		n := n.For(t)
		conn, err := amqp.DialTLS_ExternalAuth(n.AMQPSURL, withCert)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclare("", false, true, true, false, nil); err != nil {
			t.Fatal(err)
		}
		user, mech := connectionLogin(t, n, withCert)
		if user != n.ClientUser || mech != "EXTERNAL" {
			t.Errorf("the node lists user %q logged in with %q, want %q with EXTERNAL", user, mech, n.ClientUser)
		}
	})

	t.Run("no client certificate is refused on both listeners", func(t *testing.T) {
		u := amqpsURL(n, n.PasswordUser, n.Password)
		if conn, err := amqp.DialTLS(u, caOnly); err == nil {
			conn.Close()
			t.Error("AMQPS let a client without a certificate in")
		}
		if _, err := getJSON(caOnly, n.MgmtsURL+"/api/overview", basic(n.PasswordUser, n.Password)); err == nil {
			t.Error("the management API let a client without a certificate in")
		}
	})

	t.Run("a password over mTLS", func(t *testing.T) {
		conn, err := amqp.DialTLS(amqpsURL(n, n.PasswordUser, n.Password), withCert)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		if _, err := getJSON(withCert, n.MgmtsURL+"/api/overview", basic(n.PasswordUser, n.Password)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the path prefix", func(t *testing.T) {
		_, err := getJSON(withCert, strings.TrimSuffix(n.MgmtsURL, "/rabbitmq")+"/api/overview", basic(n.PasswordUser, n.Password))
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("without the prefix: %v, want a 404", err)
		}
	})

	t.Run("a token as AMQP password and as Bearer", func(t *testing.T) {
		n := n.For(t)
		token := n.Token(time.Hour)
		conn, err := amqp.DialTLS(amqpsURL(n, n.TokenUser, token), withCert)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
		var who struct {
			Name string `json:"name"`
			Tags any    `json:"tags"`
		}
		body, err := getJSON(withCert, n.MgmtsURL+"/api/whoami", bearer)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &who); err != nil || who.Name != n.TokenUser {
			t.Errorf("whoami with the token: %s (%v), want user %s", body, err, n.TokenUser)
		}
	})

	t.Run("an expired token is refused", func(t *testing.T) {
		n := n.For(t)
		expired := n.Token(-time.Minute)
		if conn, err := amqp.DialTLS(amqpsURL(n, n.TokenUser, expired), withCert); err == nil {
			conn.Close()
			t.Error("AMQP took an expired token")
		}
		_, err := getJSON(withCert, n.MgmtsURL+"/api/overview", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+expired) })
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("the management API with an expired token: %v, want a 401", err)
		}
	})
}

func amqpsURL(n *privnode.TLSNode, user, password string) string {
	u, _ := url.Parse(n.AMQPSURL)
	u.User = url.UserPassword(user, password)
	return u.String()
}

func basic(user, password string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, password) }
}

// getJSON GETs url over HTTPS with tc; a status other than 200 is an error
// naming it.
func getJSON(tc *tls.Config, url string, auth func(*http.Request)) ([]byte, error) {
	c := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	auth(req)
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var body json.RawMessage
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return nil, err
	}
	return body, nil
}

// connectionLogin waits until the node lists one client connection and
// returns its user and SASL mechanism.
func connectionLogin(t *testing.T, n *privnode.TLSNode, tc *tls.Config) (user, mechanism string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		body, err := getJSON(tc, n.MgmtsURL+"/api/connections", basic(n.PasswordUser, n.Password))
		if err != nil {
			t.Fatal(err)
		}
		var conns []struct {
			User          string `json:"user"`
			AuthMechanism string `json:"auth_mechanism"`
		}
		if err := json.Unmarshal(body, &conns); err != nil {
			t.Fatal(err)
		}
		if len(conns) == 1 {
			return conns[0].User, conns[0].AuthMechanism
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node lists %d connections, want 1", len(conns))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
