package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/dlqt/dlqt/internal/broker/connect"
)

// management talks to the management API: rabbit-hole for what it models
// well, raw JSON GETs for the fields it lacks. Every call honours ctx.
type management struct {
	endpoint string // http://host:15672, no userinfo, no trailing slash
	scheme   string // http or https
	user     string // for messages; the transport authorizes every request
	token    bool   // the transport sends an OAuth2 token
	hint     func(err error, scheme string) string
	http     *http.Client
}

func newManagement(cc *connect.Conn) (*management, error) {
	next, err := cc.HTTPTransport()
	if err != nil {
		return nil, err
	}
	nodes := cc.MgmtNodes()
	// Each node gets the full timeout, so the client waits for them all.
	fo := &failover{next: next, nodes: nodes, timeout: cc.Timeout(), hint: cc.HintMgmt}
	return &management{
		endpoint: nodes[0].String(),
		scheme:   nodes[0].Scheme,
		user:     cc.MgmtUser(),
		token:    cc.Auth().HasToken(),
		hint:     cc.HintMgmt,
		http:     &http.Client{Timeout: cc.Timeout() * time.Duration(len(nodes)), Transport: fo},
	}, nil
}

// rabbitHole returns a rabbit-hole client whose requests carry ctx, so a
// cancelled Topology call stops instead of running to the timeout. Its
// error (an endpoint rabbit-hole cannot parse) is said, never a nil client.
func (m *management) rabbitHole(ctx context.Context) (*rabbithole.Client, error) {
	rh, err := rabbithole.NewTLSClient(m.endpoint, m.user, "", ctxTransport{ctx: ctx, next: m.http.Transport})
	if err != nil {
		return nil, fmt.Errorf("management API at %s: %w", m.endpoint, err)
	}
	rh.SetTimeout(m.http.Timeout)
	return rh, nil
}

type ctxTransport struct {
	ctx  context.Context
	next http.RoundTripper
}

func (t ctxTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.next.RoundTrip(r.WithContext(t.ctx))
}

// errHTTPNotFound marks a 404 from the management API; callers turn it into
// a domain error naming what was missing.
var errHTTPNotFound = errors.New("404 not found")

// errVhostDenied marks a 401 for a user who may log in but has no
// permissions on the vhost; check names the user and the vhost.
var errVhostDenied = errors.New("may not read this vhost")

// notFoundAt is a 404 that names the URL asked, so a wrong management path
// shows where dlqt looked; it still matches errHTTPNotFound.
type notFoundAt struct{ url string }

func (e *notFoundAt) Error() string        { return "management API: 404 not found at " + e.url }
func (e *notFoundAt) Is(target error) bool { return target == errHTTPNotFound }

// get decodes the JSON answer of GET /api/<path> into out. path segments
// must already be escaped.
func (m *management) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.endpoint+"/api/"+path, nil)
	if err != nil {
		return err
	}
	res, err := m.http.Do(req)
	if err != nil {
		return m.explain(err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		return &notFoundAt{url: req.URL.String()}
	case res.StatusCode >= 400:
		var e struct {
			Error  string `json:"error"`
			Reason string `json:"reason"`
		}
		_ = json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&e)
		if res.StatusCode == http.StatusUnauthorized && strings.Contains(e.Reason, "access virtual host") {
			return fmt.Errorf("management API: user %s %w", m.user, errVhostDenied)
		}
		return m.explain(rabbithole.ErrorResponse{StatusCode: res.StatusCode, Message: e.Error, Reason: e.Reason})
	}
	dec := json.NewDecoder(res.Body)
	dec.UseNumber() // arguments keep integers exact; see jsonToHeaders
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("management API GET /api/%s: bad answer: %v", path, err)
	}
	return nil
}

// explain turns a transport or HTTP error into one line a responder can act
// on. It never includes the password.
func (m *management) explain(err error) error {
	if err == nil {
		return nil
	}
	var e401 rabbithole.ErrorResponse
	if m.token && (errors.As(err, &e401) && e401.StatusCode == http.StatusUnauthorized || strings.Contains(err.Error(), "API responded with a 401")) {
		return because(err, "management API: 401: the broker refused the OAuth2 token (is rabbitmq_auth_backend_oauth2 on, and are the token's audience and scopes right?)")
	}
	var none *noNodeError
	if errors.As(err, &none) {
		return because(err, "management API: %s", none)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("management API at %s: no answer within %s", m.endpoint, m.http.Timeout)
		}
		return err
	}
	var exp *connect.ExpiredTokenError
	if errors.As(err, &exp) {
		return exp
	}
	var rme rabbithole.ErrorResponse
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return because(err, "management API at %s: connection refused — is rabbitmq_management enabled?", m.endpoint)
	case strings.Contains(err.Error(), "API responded with a 401"): // rabbit-hole's own text
		return fmt.Errorf("management API: 401 bad credentials for user %s", m.user)
	case errors.As(err, &rme):
		if rme.StatusCode == http.StatusUnauthorized && strings.Contains(rme.Reason, "Not management user") {
			return fmt.Errorf("management API: user %s lacks the management tag (rabbitmqctl set_user_tags %s monitoring)", m.user, m.user)
		}
		if rme.StatusCode == http.StatusUnauthorized && strings.Contains(rme.Reason, "Not administrator") {
			return fmt.Errorf("management API: user %s is not an administrator, and this call needs one: %s", m.user, rme.Reason)
		}
		if rme.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("management API: 401 bad credentials for user %s", m.user)
		}
		if rme.StatusCode == http.StatusForbidden {
			return fmt.Errorf("management API: 403 user %s may not do this (needs the management tag and vhost access): %s", m.user, rme.Reason)
		}
		return fmt.Errorf("management API at %s: %d %s %s", m.endpoint, rme.StatusCode, rme.Message, rme.Reason)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("management API at %s: no answer within %s", m.endpoint, m.http.Timeout)
	}
	if h := m.hint(err, m.scheme); h != "" {
		return because(err, "management API at %s: %s — %s", m.endpoint, safeText(err), h)
	}
	return because(err, "management API at %s: %s", m.endpoint, safeText(err)) // safeText drops the URL a url.Error repeats
}

// check proves the API answers, the credentials work and the vhost exists
// and may be read. It asks only what a monitoring or management user may:
// GET /api/vhosts/{vhost} is for administrators on 3.10.
func (m *management) check(ctx context.Context, vhost string) error {
	var who struct {
		Name string          `json:"name"`
		Tags json.RawMessage `json:"tags"` // a string on old brokers, a list on newer
	}
	if err := m.get(ctx, "whoami", &who); err != nil {
		if errors.Is(err, errHTTPNotFound) {
			return fmt.Errorf("%w: is %s the management API's address? if it is served under a path prefix, put the prefix in the URL (http://host:15672/rabbitmq)", err, m.endpoint)
		}
		return err
	}
	var exchanges []struct {
		Name string `json:"name"`
	}
	err := m.get(ctx, "exchanges/"+url.PathEscape(vhost)+"?columns=name", &exchanges)
	switch {
	case errors.Is(err, errHTTPNotFound) && !strings.Contains(string(who.Tags), "administrator"):
		// 4.x answers 404 for a vhost the user has no permissions in.
		return fmt.Errorf("management API: user %s may not read vhost %q, or it does not exist (grant it permissions there: rabbitmqctl set_permissions -p %s %s ...)", m.user, vhost, vhost, m.user)
	case errors.Is(err, errHTTPNotFound):
		return notFound(fmt.Sprintf("vhost %q does not exist", vhost))
	case errors.Is(err, errVhostDenied):
		return fmt.Errorf("management API: user %s may not read vhost %q (grant it permissions there: rabbitmqctl set_permissions -p %s %s ...)", m.user, vhost, vhost, m.user)
	}
	return err
}
