package broker

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// failover sends each management request to the node that answered last
// and, when that one does not answer, to the next ones in turn. Requests are
// built against the first node's endpoint; failover rewrites them for the
// node it tries. Every node is given its own timeout.
type failover struct {
	next    http.RoundTripper
	nodes   []*url.URL // endpoints without user info or trailing slash
	hint    func(err error, scheme string) string
	timeout time.Duration

	mu  sync.Mutex
	cur int
}

func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(f.nodes) == 1 {
		return f.next.RoundTrip(req)
	}
	f.mu.Lock()
	start := f.cur
	f.mu.Unlock()
	var tries []nodeTry
	for k := range f.nodes {
		i := (start + k) % len(f.nodes)
		res, err := f.try(req, f.nodes[i])
		if err == nil && !unavailable(res.StatusCode) {
			f.mu.Lock()
			f.cur = i
			f.mu.Unlock()
			return res, nil
		}
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		if err == nil {
			res.Body.Close()
			err = errors.New(res.Status)
		}
		why := safeText(err)
		if h := f.hint(err, f.nodes[i].Scheme); h != "" {
			why += " — " + h
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			why = "connection refused"
		} else if errors.Is(err, context.DeadlineExceeded) {
			why = "no answer within " + f.timeout.String()
		}
		tries = append(tries, nodeTry{addr: f.nodes[i].Host, err: err, why: why})
		if !retriable(req, err) {
			break
		}
	}
	return nil, &noNodeError{tries}
}

// try sends req to node under a deadline of its own, held until the body
// is closed.
func (f *failover) try(req *http.Request, node *url.URL) (*http.Response, error) {
	first := f.nodes[0]
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host = node.Scheme, node.Host
	// The escaped path keeps a vhost's %2F ("/" is the default vhost): a
	// path rebuilt from the decoded one would name another resource.
	escaped := node.EscapedPath() + strings.TrimPrefix(req.URL.EscapedPath(), first.EscapedPath())
	p, err := url.PathUnescape(escaped)
	if err != nil {
		return nil, err
	}
	r.URL.Path, r.URL.RawPath = p, escaped
	r.Host = ""
	if req.Body != nil && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	ctx, cancel := context.WithTimeout(req.Context(), f.timeout)
	res, err := f.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	res.Body = cancelOnClose{res.Body, cancel}
	return res, nil
}

// unavailable is an answer from a node that cannot serve now (a proxy in
// front of a dead node, or a node still booting).
func unavailable(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// retriable says whether another node may be asked: reads always; a write
// only when it never reached the node, and only with a body that can be
// sent again.
func retriable(req *http.Request, err error) bool {
	if req.Body != nil && req.GetBody == nil {
		return false
	}
	return req.Method == http.MethodGet || req.Method == http.MethodHead || errors.Is(err, syscall.ECONNREFUSED)
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
