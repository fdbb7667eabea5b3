package broker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// Nothing listens on the first two nodes: the dial names both, and the
// error still says "nothing answers" to errors.Is.
func TestDialNamesEveryNodeTried(t *testing.T) {
	a, b := deadPort(t), deadPort(t)
	cc, err := Config{AMQPURL: "amqp://guest:guest@" + a + "/,amqp://" + b + "/", Vhost: "/"}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	_, err = newAMQPNodes(cc).dial(context.Background(), "test", false)
	want := "AMQP: no node answered: " + a + " (connection refused), " + b + " (connection refused)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Error("the error does not unwrap to ECONNREFUSED")
	}
}

// The management client goes on to the next node when one does not answer,
// stays with the one that answered, and names every node when none does.
func TestManagementFailsOver(t *testing.T) {
	var hits []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, r.URL.Path)
		if u, p, _ := r.BasicAuth(); u != "alice" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"name":"alice"}`))
	}))
	defer live.Close()
	dead := deadPort(t)
	m := mustManagement(t, Config{MgmtURL: "http://alice:pw@" + dead + "/," + live.URL + "/"})
	for range 2 {
		var who struct{ Name string }
		if err := m.get(context.Background(), "whoami", &who); err != nil || who.Name != "alice" {
			t.Fatalf("get = %v, %+v", err, who)
		}
	}
	if want := []string{"/api/whoami", "/api/whoami"}; !reflect.DeepEqual(hits, want) {
		t.Errorf("live node saw %q, want %q", hits, want)
	}
	if fo := m.http.Transport.(*failover); fo.cur != 1 {
		t.Errorf("current node = %d, want 1 (the one that answered)", fo.cur)
	}

	live.Close()
	err := m.get(context.Background(), "whoami", &struct{}{})
	host := strings.TrimPrefix(live.URL, "http://")
	want := "management API: no node answered: " + host + " (connection refused), " + dead + " (connection refused)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Error("the error does not unwrap to ECONNREFUSED")
	}
}

func deadPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func mustManagement(t *testing.T, c Config) *management {
	t.Helper()
	cc, err := c.Connect()
	if err != nil {
		t.Fatal(err)
	}
	m, err := newManagement(cc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The failover keeps a vhost's escaped slash when it sends a request to
// another node: vhost "/" (the default) is /api/exchanges/%2F, never
// /api/exchanges// (which the broker answers 404, "does not exist"), and
// each node keeps its own path prefix.
func TestManagementFailoverKeepsEscapedVhost(t *testing.T) {
	var got []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.RequestURI)
		_, _ = w.Write([]byte(`[]`))
	}))
	defer live.Close()
	dead := deadPort(t)
	m := mustManagement(t, Config{MgmtURL: "http://alice:pw@" + dead + "/first," + live.URL + "/rabbitmq/"})
	for _, vhost := range []string{"/", "pay/ments"} {
		var out []struct{}
		if err := m.get(context.Background(), "exchanges/"+url.PathEscape(vhost)+"?columns=name", &out); err != nil {
			t.Fatalf("vhost %q: %v", vhost, err)
		}
	}
	want := []string{"/rabbitmq/api/exchanges/%2F?columns=name", "/rabbitmq/api/exchanges/pay%2Fments?columns=name"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the second node was asked %q, want %q", got, want)
	}
}
