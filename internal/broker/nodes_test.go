package broker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func TestSplitNodes(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{"amqp://a:5672/", []string{"amqp://a:5672/"}},
		{"amqp://u:p@a:5672, amqp://b:5673 ,amqp://c", []string{"amqp://u:p@a:5672", "amqp://b:5673", "amqp://c"}},
		// A comma inside a password stays part of its URL.
		{"amqp://u:p,w@a:5672/", []string{"amqp://u:p,w@a:5672/"}},
		{"amqp://u:p,w@a/,amqp://b/", []string{"amqp://u:p,w@a/", "amqp://b/"}},
		{"http://a:15672,,", []string{"http://a:15672"}},
	} {
		if got := splitNodes(tc.raw); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitNodes(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestNodesInheritTheFirstCredentials(t *testing.T) {
	c := Config{AMQPURL: "amqp://alice:s3cret@h1:5672/,amqp://h2:5673/,amqp://bob:x@h3/", Vhost: "pay/ments"}
	n, err := newAMQPNodes(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"amqp://alice:s3cret@h1:5672/pay%2Fments",
		"amqp://alice:s3cret@h2:5673/pay%2Fments",
		"amqp://bob:x@h3/pay%2Fments",
	}
	if !reflect.DeepEqual(n.urls, want) {
		t.Errorf("urls = %q, want %q", n.urls, want)
	}
	if want := []string{"h1:5672", "h2:5673", "h3:5672"}; !reflect.DeepEqual(n.addrs, want) {
		t.Errorf("addrs = %q, want %q", n.addrs, want)
	}
	// The management API takes the AMQP list's credentials unless its own
	// list names some.
	c.MgmtURL = "http://m1:15672,http://m2:15672"
	if u, p, _ := c.credentials(); u != "alice" || p != "s3cret" {
		t.Errorf("credentials = %s/%s, want alice/s3cret", u, p)
	}
	c.MgmtURL = "http://m1:15672,http://carol:pw@m2:15672"
	if u, p, _ := c.credentials(); u != "carol" || p != "pw" {
		t.Errorf("credentials = %s/%s, want carol/pw", u, p)
	}
}

// Nothing listens on the first two nodes: the dial names both, and the
// error still says "nothing answers" to errors.Is.
func TestDialNamesEveryNodeTried(t *testing.T) {
	a, b := deadPort(t), deadPort(t)
	n, err := newAMQPNodes(Config{AMQPURL: "amqp://guest:guest@" + a + "/,amqp://" + b + "/", Vhost: "/"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.dial(context.Background(), Config{Vhost: "/"}, "test", false)
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
	m, err := newManagement(Config{MgmtURL: "http://alice:pw@" + dead + "/," + live.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
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
	err = m.get(context.Background(), "whoami", &struct{}{})
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
