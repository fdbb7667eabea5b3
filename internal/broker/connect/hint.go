package connect

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Hint says what to change for a connection error: "" when it has nothing
// to add. scheme is the URL's (amqp, amqps, http, https).
func Hint(err error, scheme string) string {
	if err == nil {
		return ""
	}
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var alert tls.AlertError
	var ae *amqp.Error
	msg := err.Error()
	switch {
	case errors.As(err, &ua), strings.Contains(msg, "certificate signed by unknown authority"):
		return "the broker's certificate is signed by a CA this machine does not trust: set tls.ca_file (--tls-ca-file, DLQT_TLS_CA_FILE) to that CA's PEM file"
	case errors.As(err, &he):
		return "the broker's certificate does not name this host: connect by a name it holds, or set tls.server_name (--tls-server-name)"
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		return "the broker's certificate has expired or is not valid yet (check the clocks, or renew it)"
	case errors.As(err, &alert) && (alert == 116 || alert == 42), strings.Contains(msg, "certificate required"), strings.Contains(msg, "bad certificate"):
		return "the broker wants a client certificate: set tls.cert_file and tls.key_file (--tls-cert-file, --tls-key-file)"
	case errors.As(err, &alert) && alert == 48, strings.Contains(msg, "unknown certificate authority"):
		return "the broker does not trust the CA of dlqt's client certificate (tls.cert_file): it must be signed by a CA in the broker's ssl_options.cacertfile"
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		if scheme == "https" {
			return "this port does not speak TLS: is it an http:// port?"
		}
		return "this port does not speak TLS: is it an amqp:// port (5672) rather than amqps:// (5671)?"
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return "this port does not speak TLS: use http://"
	case scheme == "http" && (strings.Contains(msg, "malformed HTTP response") || strings.Contains(msg, "Client sent an HTTP request to an HTTPS server")):
		return "is this an https:// port? the management API answered in TLS"
	case scheme == "amqp" && errors.As(err, &ae) && ae.Code == amqp.FrameError && !IsTimeout(err):
		return "is this an amqps:// port? a TLS listener answers an amqp:// URL with bytes AMQP cannot read"
	}
	return ""
}

// IsTimeout says whether err is a connection attempt that got no answer in
// time. amqp091 reports a read that timed out as a frame error whose reason
// is the read's error text, so that text is read too.
func IsTimeout(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var ae *amqp.Error
	return errors.As(err, &ae) && strings.Contains(ae.Reason, "i/o timeout")
}
