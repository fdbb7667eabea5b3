package privnode

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TLS ports of private nodes: AMQPS and management HTTPS are tlsBase+i for
// the slot i of the node's plain ports (which stay open for the harness's
// own control: readiness, rabbitmqctl's peers, the guest API calls).
const (
	amqpsBase = amqpBase + portSlots // 5760
	mgmtsBase = mgmtBase + portSlots // 15760
)

// TLSOptions choose what a TLS node asks of its clients.
type TLSOptions struct {
	// RequireClientCert sets fail_if_no_peer_cert = true on AMQPS and on
	// the management listener: a client without a certificate of the
	// node's CA is refused in the handshake. Without it the node still
	// verifies a certificate a client sends (verify_peer), which EXTERNAL
	// needs, but lets one with only the CA in.
	RequireClientCert bool
	// PathPrefix is management.path_prefix ("/rabbitmq"); MgmtURL and
	// MgmtsURL include it.
	PathPrefix string
	// OAuth2 enables rabbitmq_auth_backend_oauth2 (before the internal
	// backend) with an RS256 key made here; Token mints its tokens.
	OAuth2 bool
}

// TLSNode is a private node that also serves AMQPS and the management API
// over HTTPS, with a CA, server and client certificate made for it, the
// EXTERNAL mechanism, and optionally OAuth2. Everything lives in the node's
// directory and goes away with it.
type TLSNode struct {
	*Node
	Opts TLSOptions
	// AMQPSURL is amqps://127.0.0.1:<port>/ without credentials; MgmtsURL
	// is https://127.0.0.1:<port> plus the path prefix. Host names
	// 127.0.0.1 and localhost are both in the server certificate.
	AMQPSURL, MgmtsURL            string
	AMQPSPort, MgmtsPort          int
	CAFile                        string // PEM of the CA that signed both server and client
	CertFile, KeyFile             string // the client certificate and its key (PKCS#8)
	ServerCertFile, ServerKeyFile string
	// ClientUser is the client certificate's common name: a user of the
	// node with no password, administrator on every vhost, who can only
	// log in with EXTERNAL. PasswordUser/Password is an administrator who
	// logs in with a password (not guest: nothing of it is guessable).
	ClientUser             string
	PasswordUser, Password string
	// TokenUser is the sub of minted tokens (OAuth2 only). ResourceServer
	// is auth_oauth2.resource_server_id, the tokens' aud and scope prefix.
	TokenUser, ResourceServer string

	ca         *x509.Certificate
	caPool     *x509.CertPool
	clientCert tls.Certificate
	signingKey *rsa.PrivateKey
	keyID      string
}

// StartTLS boots one TLS node.
func StartTLS(t testing.TB, opts TLSOptions) *TLSNode {
	t.Helper()
	return StartTLSNodes(t, opts)[0]
}

// StartTLSNodes boots one TLS node per options, all at once (a node takes
// tens of seconds to boot; side by side they take about as long as one).
func StartTLSNodes(t testing.TB, opts ...TLSOptions) []*TLSNode {
	t.Helper()
	root := tlsRoot(t)
	var nodes []*TLSNode
	for i := 0; i < portSlots && len(nodes) < len(opts); i++ {
		lock, ok := claim(i)
		if !ok {
			continue
		}
		if !portsFree(amqpsBase+i, mgmtsBase+i) {
			lock.Close()
			continue
		}
		n := newNode(t, nodeDir(t, root), i, lock)
		t.Cleanup(n.Stop)
		if root != "" {
			if err := n.inChroot(root); err != nil {
				t.Fatal(err)
			}
		}
		nodes = append(nodes, configureTLS(t, n, i, opts[len(nodes)]))
	}
	if len(nodes) < len(opts) {
		t.Fatalf("only %d free private-node slots in ports %d-%d, want %d", len(nodes), amqpBase, amqpBase+portSlots-1, len(opts))
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = n.boot() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("private RabbitMQ TLS node %s: %v\n%s", nodes[i].Name, err, nodes[i].logTail())
		}
	}
	for _, n := range nodes {
		n.addUsers()
	}
	return nodes
}

// tlsRoot is the chroot whose RabbitMQ TLS nodes run: "" (the machine's)
// unless DLQT_TEST_PRIVATE_NODES=off, where make test-compat's 4.x columns
// name their version's chroot in DLQT_TEST_PRIVNODE_ROOT (the other
// private nodes skip there). It skips under -short, and with private nodes
// off and no chroot named.
func tlsRoot(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("a private RabbitMQ node takes seconds to boot")
	}
	if os.Getenv("DLQT_TEST_PRIVATE_NODES") != "off" {
		return ""
	}
	root := os.Getenv("DLQT_TEST_PRIVNODE_ROOT")
	if root == "" {
		t.Skip("private nodes are off (DLQT_TEST_PRIVATE_NODES=off) and no DLQT_TEST_PRIVNODE_ROOT names a RabbitMQ chroot to run one from")
	}
	return root
}

// nodeDir is a node's directory: the test's own, or one inside the chroot
// (removed when the test ends, after the node stops).
func nodeDir(t testing.TB, root string) string {
	t.Helper()
	if root == "" {
		return t.TempDir()
	}
	tmp := filepath.Join(root, "tmp")
	dir, err := os.MkdirTemp(tmp, "dlqt-privnode-")
	if err != nil {
		t.Fatalf("a node directory in the chroot: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func portsFree(ports ...int) bool {
	for _, p := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// configureTLS writes the certificates, keys and the node's config.
func configureTLS(t testing.TB, n *Node, i int, opts TLSOptions) *TLSNode {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	tn := &TLSNode{
		Node:           n,
		Opts:           opts,
		AMQPSPort:      amqpsBase + i,
		MgmtsPort:      mgmtsBase + i,
		ClientUser:     "dlqt-cert-" + suffix,
		PasswordUser:   "dlqt-admin-" + suffix,
		Password:       randomSecret(),
		TokenUser:      "dlqt-token-" + suffix,
		ResourceServer: "rabbitmq",
	}
	tn.AMQPSURL = fmt.Sprintf("amqps://127.0.0.1:%d/", tn.AMQPSPort)
	tn.MgmtsURL = fmt.Sprintf("https://127.0.0.1:%d%s", tn.MgmtsPort, opts.PathPrefix)
	n.MgmtURL += opts.PathPrefix // the prefix holds for the plain listener too

	tn.makeCerts(t)
	verify := "false"
	if opts.RequireClientCert {
		verify = "true"
	}
	conf := fmt.Sprintf(`listeners.tcp.default = %d
listeners.ssl.default = %d
ssl_options.cacertfile = %s
ssl_options.certfile = %s
ssl_options.keyfile = %s
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = %s
auth_mechanisms.1 = PLAIN
auth_mechanisms.2 = AMQPLAIN
auth_mechanisms.3 = EXTERNAL
ssl_cert_login_from = common_name
management.tcp.port = %d
management.tcp.ip = 127.0.0.1
management.ssl.port = %d
management.ssl.ip = 127.0.0.1
management.ssl.cacertfile = %s
management.ssl.certfile = %s
management.ssl.keyfile = %s
management.ssl.verify = verify_peer
management.ssl.fail_if_no_peer_cert = %s
loopback_users = none
collect_statistics_interval = 500
`, amqpBase+i, tn.AMQPSPort, n.inner(tn.CAFile), n.inner(tn.ServerCertFile), n.inner(tn.ServerKeyFile), verify,
		mgmtBase+i, tn.MgmtsPort, n.inner(tn.CAFile), n.inner(tn.ServerCertFile), n.inner(tn.ServerKeyFile), verify)
	if opts.PathPrefix != "" {
		conf += "management.path_prefix = " + opts.PathPrefix + "\n"
	}
	plugins := "rabbitmq_management,rabbitmq_auth_mechanism_ssl"
	if opts.OAuth2 {
		tn.makeSigningKey(t)
		// These keys mean the same on 3.10 and 4.x: signing_keys.<kid>
		// names a PEM file the node reads at boot, default_key is the key
		// for a token without a kid.
		conf += fmt.Sprintf(`auth_backends.1 = rabbit_auth_backend_oauth2
auth_backends.2 = internal
auth_oauth2.resource_server_id = %s
auth_oauth2.signing_keys.%s = %s
auth_oauth2.default_key = %s
`, tn.ResourceServer, tn.keyID, n.inner(filepath.Join(n.dir, "tls", "signing.pub.pem")), tn.keyID)
		plugins += ",rabbitmq_auth_backend_oauth2"
	}
	write(t, filepath.Join(n.dir, "rabbitmq.conf"), conf, 0o600)
	write(t, filepath.Join(n.dir, "enabled_plugins"), "["+plugins+"].\n", 0o600)
	return tn
}

// randomSecret is a password no test could guess or hard-code.
func randomSecret() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "pw-" + hex.EncodeToString(b[:])
}

// makeCerts makes a CA, a server certificate for 127.0.0.1 and localhost,
// and a client certificate whose common name is ClientUser, and writes
// them as PEM to the node's tls directory.
func (tn *TLSNode) makeCerts(t testing.TB) {
	t.Helper()
	dir := filepath.Join(tn.dir, "tls")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "dlqt test CA " + tn.Name, Organization: []string{"dlqt tests"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	tn.ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	tn.caPool = x509.NewCertPool()
	tn.caPool.AddCert(tn.ca)
	tn.CAFile = filepath.Join(dir, "ca.pem")
	writePEM(t, tn.CAFile, "CERTIFICATE", caDER)

	issue := func(tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
		key := newKey(t)
		tmpl.SerialNumber = serial()
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tn.ca, key.Public(), caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}

	srvDER, srvKey := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	tn.ServerCertFile = filepath.Join(dir, "server.pem")
	tn.ServerKeyFile = filepath.Join(dir, "server.key")
	writePEM(t, tn.ServerCertFile, "CERTIFICATE", srvDER)
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, tn.ServerKeyFile, "EC PRIVATE KEY", srvKeyDER)

	cliDER, cliKey := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: tn.ClientUser, Organization: []string{"dlqt tests"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	tn.CertFile = filepath.Join(dir, "client.pem")
	tn.KeyFile = filepath.Join(dir, "client.key")
	writePEM(t, tn.CertFile, "CERTIFICATE", cliDER)
	cliKeyDER, err := x509.MarshalPKCS8PrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, tn.KeyFile, "PRIVATE KEY", cliKeyDER)
	tn.clientCert, err = tls.LoadX509KeyPair(tn.CertFile, tn.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	write(t, path, string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})), 0o600)
}

// addUsers creates the certificate's user (no password: EXTERNAL only) and
// the password user, both administrators with every permission on "/".
func (tn *TLSNode) addUsers() {
	tn.t.Helper()
	tn.Ctl("add_user", tn.ClientUser, randomSecret())
	tn.Ctl("clear_password", tn.ClientUser)
	tn.Ctl("add_user", tn.PasswordUser, tn.Password)
	for _, u := range []string{tn.ClientUser, tn.PasswordUser} {
		tn.Ctl("set_user_tags", u, "administrator")
		tn.Ctl("set_permissions", "-p", "/", u, ".*", ".*", ".*")
	}
}

// Grant gives ClientUser and PasswordUser every permission on vhost (one
// made with NewVhost, where only guest has any).
func (tn *TLSNode) Grant(vhost string) {
	tn.t.Helper()
	for _, u := range []string{tn.ClientUser, tn.PasswordUser} {
		tn.Ctl("set_permissions", "-p", vhost, u, ".*", ".*", ".*")
	}
}

// For is the node with its helpers failing t (see Node.For).
func (tn *TLSNode) For(t testing.TB) *TLSNode {
	sub := *tn
	sub.Node = tn.Node.For(t)
	return &sub
}

// CAPool holds the node's CA, for a client that verifies the server.
func (tn *TLSNode) CAPool() *x509.CertPool { return tn.caPool }

// ClientTLS is a client configuration trusting the node's CA and, with
// withCert, presenting the client certificate.
func (tn *TLSNode) ClientTLS(withCert bool) *tls.Config {
	c := &tls.Config{RootCAs: tn.caPool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if withCert {
		c.Certificates = []tls.Certificate{tn.clientCert}
	}
	return c
}

// makeSigningKey makes the RS256 key tokens are signed with and writes its
// public half where the node's config points.
func (tn *TLSNode) makeSigningKey(t testing.TB) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(tn.dir, "tls", "signing.pub.pem"), "PUBLIC KEY", pub)
	tn.signingKey, tn.keyID = k, "dlqt-test-key"
}

// Token mints an RS256 JWT for TokenUser with every permission on every
// vhost and the administrator tag, expiring exp from now (negative: a
// token that already expired).
func (tn *TLSNode) Token(exp time.Duration) string {
	tn.t.Helper()
	rs := tn.ResourceServer
	return tn.TokenWith(map[string]any{
		"sub":       tn.TokenUser,
		"client_id": tn.TokenUser,
		"aud":       []string{rs},
		"scope": strings.Join([]string{rs + ".read:*/*", rs + ".write:*/*", rs + ".configure:*/*",
			rs + ".tag:administrator"}, " "),
		"iat": time.Now().Add(-time.Minute).Unix(),
		"exp": time.Now().Add(exp).Unix(),
	})
}

// TokenWith signs claims as they are (RS256, with the node's key id).
func (tn *TLSNode) TokenWith(claims map[string]any) string {
	tn.t.Helper()
	if tn.signingKey == nil {
		tn.t.Fatal("Token: the node was started without OAuth2")
	}
	return signRS256(tn.t, tn.signingKey, tn.keyID, claims)
}

// signRS256 is a compact JWS (RFC 7515) with RS256: a header and the
// claims, base64url without padding, signed with RSASSA-PKCS1-v1_5 over
// SHA-256.
func signRS256(t testing.TB, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	header, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": kid})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(body)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + enc.EncodeToString(sig)
}

// Login is a client connection as the node sees its login: the user, the
// SASL mechanism (PLAIN, EXTERNAL) and the connection_name its client gave.
type Login struct {
	User, Mechanism, ClientName string
}

// Logins lists the client connections' logins (through the plain
// management listener, as guest; the node learns of a new connection
// within a statistics interval). Like ListConnections it returns its error.
func (tn *TLSNode) Logins() ([]Login, error) {
	var conns []struct {
		User             string         `json:"user"`
		AuthMechanism    string         `json:"auth_mechanism"`
		ClientProperties map[string]any `json:"client_properties"`
	}
	if err := tn.mgmt("GET", "connections", &conns); err != nil {
		return nil, err
	}
	logins := make([]Login, len(conns))
	for i, c := range conns {
		name, _ := c.ClientProperties["connection_name"].(string)
		logins[i] = Login{User: c.User, Mechanism: c.AuthMechanism, ClientName: name}
	}
	return logins, nil
}

// Version is the node's rabbitmq_version (4.3.6, 3.10.8).
func (n *Node) Version() string {
	n.t.Helper()
	var o struct {
		Version string `json:"rabbitmq_version"`
	}
	if err := n.mgmt("GET", "overview", &o); err != nil {
		n.t.Fatal(err)
	}
	return o.Version
}
