package brokertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/broker"
)

// LeaseOwner is the management API's name of the connection that owns
// queue's lease ("" while there is none, or before the API has seen the
// connection): a test tells a lease taken again from the one it cut.
func LeaseOwner(t testing.TB, cfg broker.Config, queue string) string {
	t.Helper()
	u, err := url.Parse(cfg.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, cfg.MgmtURL+"/api/queues/"+url.PathEscape(cfg.Vhost)+"/"+url.PathEscape(broker.LeasePrefix+queue), nil)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	req.SetBasicAuth(u.User.Username(), pass)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var q struct {
		Owner json.RawMessage `json:"owner_pid_details"` // [] until the API has seen the connection
	}
	var owner struct {
		Name string `json:"name"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&q) != nil || json.Unmarshal(q.Owner, &owner) != nil {
		return ""
	}
	return owner.Name
}
