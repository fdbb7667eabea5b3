package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
)

// Issue 19's table, through the built dlqt, against two private TLS nodes
// booted side by side and shared by every case:
//
//   - ca: verify_peer without fail_if_no_peer_cert (a client with only the
//     CA gets in), management under the path prefix /rabbitmq;
//   - mtls: a client certificate required on AMQPS and on the management
//     API, EXTERNAL, and OAuth2 with an RS256 key made in the test.
//
// Both nodes are private: their vhost "/" is this test's. Every output of
// every case (stdout, stderr, the TUI's screen) is kept, and the last case
// checks that none holds a password or token.
func TestProductionReach(t *testing.T) {
	nodes := privnode.StartTLSNodes(t,
		privnode.TLSOptions{PathPrefix: "/rabbitmq"},
		privnode.TLSOptions{RequireClientCert: true, OAuth2: true})
	caNode, mtls := nodes[0], nodes[1]
	const queue = "orders.parking"
	seedParked(t, caNode, "/", queue)
	seedParked(t, mtls, "/", queue)
	// A second vhost, named only by an AMQP URL's path.
	caNode.Ctl("add_vhost", "reach")
	caNode.Ctl("set_permissions", "-p", "reach", "guest", ".*", ".*", ".*")
	caNode.Grant("reach")
	seedParked(t, caNode, "reach", "reach.parking")

	t.Logf("RabbitMQ %s", caNode.Version())
	planted := "Hunter2-" + randHex(6)
	wrong := "Wrong-" + randHex(6)
	token := mtls.Token(time.Hour)
	expired := mtls.Token(-time.Minute)
	// Signed by the node's key but for another resource server: only the
	// broker can tell it is no good.
	foreign := mtls.TokenWith(map[string]any{
		"sub": mtls.TokenUser, "aud": []string{"elsewhere"}, "scope": "elsewhere.read:*/* elsewhere.tag:administrator",
		"exp": time.Now().Add(time.Hour).Unix(),
	})
	secrets := map[string]string{
		"the ca node's password": caNode.Password, "the mtls node's password": mtls.Password,
		"the planted password": planted, "the token": token, "the expired token": expired,
		"the wrong password": wrong, "the foreign token": foreign,
	}
	var outs outputs
	dir := t.TempDir()
	caPassFile := writeSecret(t, dir, "ca-node.pass", caNode.Password)
	mtlsPassFile := writeSecret(t, dir, "mtls-node.pass", mtls.Password)
	tokenFile := writeSecret(t, dir, "token", token)
	expiredFile := writeSecret(t, dir, "expired-token", expired)
	wrongFile := writeSecret(t, dir, "wrong.pass", wrong)
	foreignFile := writeSecret(t, dir, "foreign-token", foreign)

	// caEnv points dlqt at the CA-only node with yaml as its config file.
	caEnv := func(t *testing.T, yaml string) []string {
		return append(isolatedEnv(t),
			"DLQT_CONFIG="+writeConfig(t, fmt.Sprintf("amqp_url: %s\nmgmt_url: %s\n%s", caNode.AMQPSURL, caNode.MgmtsURL, yaml)))
	}
	mtlsEnv := func(t *testing.T, yaml string) []string {
		return append(isolatedEnv(t),
			"DLQT_CONFIG="+writeConfig(t, fmt.Sprintf("amqp_url: %s\nmgmt_url: %s\n%s", mtls.AMQPSURL, mtls.MgmtsURL, yaml)))
	}
	// listsQueue runs dlqt queues --json and wants the parked queue listed
	// (the dial reaches AMQP and the management API), then dlqt messages,
	// which reads it over AMQP.
	listsQueue := func(t *testing.T, env []string, args ...string) {
		t.Helper()
		r := outs.run(t, env, append(args, "queues", "--json")...)
		if r.code != 0 || !strings.Contains(r.stdout, `"`+queue+`"`) {
			t.Fatalf("dlqt queues: exit %d, want %s listed\nstdout: %s\nstderr: %s", r.code, queue, r.stdout, r.stderr)
		}
		r = outs.run(t, env, append(args, "messages", queue, "--json")...)
		if r.code != 0 || !strings.Contains(r.stdout, "parked-"+queue) {
			t.Fatalf("dlqt messages: exit %d, want the parked message\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	}
	fails := func(t *testing.T, env []string, words ...string) result {
		t.Helper()
		r := outs.run(t, env, "queues", "--json")
		if r.code == 0 {
			t.Fatalf("dlqt queues succeeded, want an error naming %q\nstdout: %s", words, r.stdout)
		}
		t.Logf("dlqt says: %s", strings.TrimSpace(r.stderr))
		for _, w := range words {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("the error does not name %q:\n%s", w, r.stderr)
			}
		}
		return r
	}
	user := func(n *privnode.TLSNode) string { return "user: " + n.PasswordUser + "\n" }

	t.Run("CA only: nothing set is an x509 error with a hint", func(t *testing.T) {
		fails(t, caEnv(t, user(caNode)+"password_file: "+caPassFile+"\n"),
			"certificate signed by unknown authority", "--tls-ca-file", "tls.ca_file")
	})
	t.Run("CA only: --tls-ca-file", func(t *testing.T) {
		listsQueue(t, caEnv(t, user(caNode)+"password_file: "+caPassFile+"\n"), "--tls-ca-file", caNode.CAFile)
	})
	t.Run("CA only: tls.ca_file and --password-file", func(t *testing.T) {
		listsQueue(t, caEnv(t, user(caNode)+"tls:\n  ca_file: "+caNode.CAFile+"\n"), "--password-file", caPassFile)
	})
	t.Run("CA only: DLQT_TLS_CA_FILE and DLQT_PASSWORD", func(t *testing.T) {
		listsQueue(t, append(caEnv(t, user(caNode)), "DLQT_TLS_CA_FILE="+caNode.CAFile, "DLQT_PASSWORD="+caNode.Password))
	})
	t.Run("CA only: password_command", func(t *testing.T) {
		listsQueue(t, caEnv(t, user(caNode)+"password_command: cat "+caPassFile+"\ntls:\n  ca_file: "+caNode.CAFile+"\n"))
	})
	t.Run("a wrong password is refused without a word of it", func(t *testing.T) {
		fails(t, caEnv(t, user(caNode)+"password_file: "+wrongFile+"\ntls:\n  ca_file: "+caNode.CAFile+"\n"),
			"401", caNode.PasswordUser)
	})
	t.Run("a vhost in the AMQP URL's path is used, or refused with a word", func(t *testing.T) {
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %sreach\nmgmt_url: %s\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			caNode.AMQPSURL, caNode.MgmtsURL, user(caNode), caPassFile, caNode.CAFile)))
		r := outs.run(t, env, "queues", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, `"reach.parking"`) || strings.Contains(r.stdout, queue) {
			t.Errorf("with the URL's path /reach: exit %d, want reach.parking listed and not %s\nstdout: %s\nstderr: %s", r.code, queue, r.stdout, r.stderr)
		}
		r = outs.run(t, env, "--vhost", "/", "queues", "--json")
		if r.code == 0 {
			t.Fatalf("--vhost / beside a URL naming reach was not refused: %s", r.stdout)
		}
		t.Logf("dlqt says: %s", strings.TrimSpace(r.stderr))
		assertOneLine(t, r.stderr, "reach")
	})
	t.Run("path prefix missing: a 404 says so", func(t *testing.T) {
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %s\nmgmt_url: https://127.0.0.1:%d\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			caNode.AMQPSURL, caNode.MgmtsPort, user(caNode), caPassFile, caNode.CAFile)))
		fails(t, env, "404", "prefix", "/rabbitmq")
	})
	t.Run("two management URLs, vhost /", func(t *testing.T) {
		env := append(isolatedEnv(t), "DLQT_VHOST=/", "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %s\nmgmt_url: https://127.0.0.1:%d/rabbitmq,https://localhost:%d/rabbitmq\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			caNode.AMQPSURL, caNode.MgmtsPort, caNode.MgmtsPort, user(caNode), caPassFile, caNode.CAFile)))
		listsQueue(t, env)
	})

	t.Run("two management URLs: a TLS failure names the node, mgmt_tls overrides tls", func(t *testing.T) {
		// tls.ca_file is right for AMQP; mgmt_tls.ca_file, another node's
		// CA, is wrong for the management API.
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %s\nmgmt_url: https://127.0.0.1:%d/rabbitmq,https://localhost:%d/rabbitmq\n%spassword_file: %s\ntls:\n  ca_file: %s\nmgmt_tls:\n  ca_file: %s\n",
			caNode.AMQPSURL, caNode.MgmtsPort, caNode.MgmtsPort, user(caNode), caPassFile, caNode.CAFile, mtls.CAFile)))
		r := fails(t, env, "unknown authority", fmt.Sprintf("127.0.0.1:%d", caNode.MgmtsPort))
		if strings.Contains(r.stderr, "unparsable") {
			t.Errorf("the failing node is not named: %s", r.stderr)
		}
	})
	t.Run("mTLS: no client certificate says the broker wants one", func(t *testing.T) {
		fails(t, mtlsEnv(t, user(mtls)+"password_file: "+mtlsPassFile+"\ntls:\n  ca_file: "+mtls.CAFile+"\n"),
			"client certificate", "--tls-cert-file")
	})
	t.Run("mTLS: certificate and key flags", func(t *testing.T) {
		listsQueue(t, mtlsEnv(t, user(mtls)), "--tls-ca-file", mtls.CAFile,
			"--tls-cert-file", mtls.CertFile, "--tls-key-file", mtls.KeyFile, "--password-file", mtlsPassFile)
	})
	t.Run("mTLS: a key without a certificate is one clear error", func(t *testing.T) {
		r := outs.run(t, mtlsEnv(t, user(mtls)+"password_file: "+mtlsPassFile+"\n"), "--tls-ca-file", mtls.CAFile,
			"--tls-key-file", mtls.KeyFile, "queues")
		if r.code == 0 {
			t.Fatalf("a key without a certificate was accepted: %s", r.stdout)
		}
		assertOneLine(t, r.stderr, "cert")
	})
	t.Run("EXTERNAL: the certificate logs in on AMQP", func(t *testing.T) {
		// The management API takes no certificate login: it gets the
		// password user, and AMQP must log in as the certificate's user,
		// who has no password, with EXTERNAL.
		env := mtlsEnv(t, fmt.Sprintf("auth: external\n%spassword_file: %s\ntls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n",
			user(mtls), mtlsPassFile, mtls.CAFile, mtls.CertFile, mtls.KeyFile))
		listsQueue(t, env)
		s := startTerm(t, 200, 40, env)
		outs.keepScreen(s)
		s.waitFor(queue)
		n := mtls.For(t)
		deadline := time.Now().Add(15 * time.Second)
		for {
			logins, err := n.Logins()
			if err != nil {
				t.Fatal(err)
			}
			var seen []string
			for _, l := range logins {
				if l.Mechanism == "EXTERNAL" && l.User == n.ClientUser {
					return
				}
				seen = append(seen, l.User+"/"+l.Mechanism)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the node lists logins %v, none of %s with EXTERNAL", seen, n.ClientUser)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	t.Run("EXTERNAL with no password anywhere: the management API still needs a user", func(t *testing.T) {
		// Issue 19: "with no user dlqt silently uses guest/guest". The node
		// is on 127.0.0.1 and lets guest in, as a broker on localhost does:
		// a silent guest login there is what a production config would
		// never notice in testing.
		r := outs.run(t, mtlsEnv(t, fmt.Sprintf("auth: external\ntls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n",
			mtls.CAFile, mtls.CertFile, mtls.KeyFile)), "queues", "--json")
		if r.code == 0 {
			t.Fatalf("auth: external with no user and no password worked: the management API logged in as guest/guest without a word\nstderr: %s", r.stderr)
		}
		t.Logf("dlqt says: %s", strings.TrimSpace(r.stderr))
		assertOneLine(t, r.stderr, "external", "management API", "user")
	})
	t.Run("OAuth2: token_file", func(t *testing.T) {
		listsQueue(t, mtlsEnv(t, fmt.Sprintf("user: %s\ntoken_file: %s\ntls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n",
			mtls.TokenUser, tokenFile, mtls.CAFile, mtls.CertFile, mtls.KeyFile)))
	})
	t.Run("OAuth2: token_command", func(t *testing.T) {
		listsQueue(t, mtlsEnv(t, fmt.Sprintf("user: %s\ntoken_command: cat %s\ntls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n",
			mtls.TokenUser, tokenFile, mtls.CAFile, mtls.CertFile, mtls.KeyFile)))
	})
	t.Run("OAuth2: an expired token says it expired", func(t *testing.T) {
		fails(t, mtlsEnv(t, fmt.Sprintf("user: %s\ntoken_file: %s\ntls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n",
			mtls.TokenUser, expiredFile, mtls.CAFile, mtls.CertFile, mtls.KeyFile)), "expired")
	})

	t.Run("OAuth2: a token the broker refuses says so", func(t *testing.T) {
		fails(t, mtlsEnv(t, fmt.Sprintf("user: %s\ntoken_file: %s\ntls:\n  ca_file: %s\n  cert_file: %s\n  key_file: %s\n",
			mtls.TokenUser, foreignFile, mtls.CAFile, mtls.CertFile, mtls.KeyFile)), "token")
	})
	t.Run("a user without a password is asked for it, without echo", func(t *testing.T) {
		s := startProgram(t, "", 200, 30, caEnv(t, user(caNode)+"tls:\n  ca_file: "+caNode.CAFile+"\n"),
			"/bin/sh", "-c", `"$@"; exec sleep 60`, "sh", dlqtBin)
		outs.keepScreen(s)
		s.waitFor("Password for " + caNode.PasswordUser)
		s.typeText(caNode.Password)
		s.keys("Enter")
		s.waitFor(queue)
	})
	t.Run("a silent AMQP port: --connect-timeout", func(t *testing.T) {
		silent := silentPort(t)
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: amqp://127.0.0.1:%d/\nmgmt_url: %s\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			silent, caNode.MgmtsURL, user(caNode), caPassFile, caNode.CAFile)))
		timesOut(t, &outs, env, "--connect-timeout", "2s")
	})
	t.Run("a silent management port: connect_timeout", func(t *testing.T) {
		silent := silentPort(t)
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %s\nmgmt_url: https://127.0.0.1:%d\nconnect_timeout: 2s\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			caNode.AMQPSURL, silent, user(caNode), caPassFile, caNode.CAFile)))
		timesOut(t, &outs, env)
	})

	t.Run("a silent port on screen: connecting to, not a blank screen", func(t *testing.T) {
		silent := silentPort(t)
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %s\nmgmt_url: https://127.0.0.1:%d\nconnect_timeout: 3s\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			caNode.AMQPSURL, silent, user(caNode), caPassFile, caNode.CAFile)))
		s := startProgram(t, "", 200, 30, env, "/bin/sh", "-c", `"$@"; exec sleep 60`, "sh", dlqtBin)
		outs.keepScreen(s)
		s.waitFor("connecting to", "3s")
		s.waitFor("dlqt: management API", "3s")
	})
	t.Run("--tls-insecure works and warns", func(t *testing.T) {
		r := outs.run(t, caEnv(t, user(caNode)+"password_file: "+caPassFile+"\n"), "--tls-insecure", "queues", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, queue) {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "NOT verified") {
			t.Errorf("no warning on stderr: %q", r.stderr)
		}
	})
	t.Run("tls.server_name: a name the certificate does not hold", func(t *testing.T) {
		fails(t, caEnv(t, user(caNode)+"password_file: "+caPassFile+"\ntls:\n  ca_file: "+caNode.CAFile+"\n  server_name: wrong.example\n"),
			"wrong.example", "server_name")
	})
	t.Run("--tls-server-name: a name it holds", func(t *testing.T) {
		listsQueue(t, caEnv(t, user(caNode)+"password_file: "+caPassFile+"\ntls:\n  ca_file: "+caNode.CAFile+"\n"), "--tls-server-name", "localhost")
	})
	t.Run("amqp:// and http:// to TLS ports: is this a TLS port?", func(t *testing.T) {
		env := append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: amqp://127.0.0.1:%d/\nmgmt_url: %s\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			caNode.AMQPSPort, caNode.MgmtsURL, user(caNode), caPassFile, caNode.CAFile)))
		fails(t, env, "amqps://")
		env = append(isolatedEnv(t), "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %s\nmgmt_url: http://127.0.0.1:%d/rabbitmq\n%spassword_file: %s\ntls:\n  ca_file: %s\n",
			caNode.AMQPSURL, caNode.MgmtsPort, user(caNode), caPassFile, caNode.CAFile)))
		fails(t, env, "https://")
	})
	t.Run("a discard's journal and its export carry no secret", func(t *testing.T) {
		env := append(isolatedEnv(t), "DLQT_PASSWORD="+caNode.Password, "DLQT_CONFIG="+writeConfig(t, fmt.Sprintf(
			"amqp_url: %sreach\nmgmt_url: %s\n%stls:\n  ca_file: %s\n", caNode.AMQPSURL, caNode.MgmtsURL, user(caNode), caNode.CAFile)))
		r := outs.run(t, env, "--tls-insecure", "discard", "reach.parking", "--where", "text~parked-reach", "--reason", "issue 19 secrets check", "--yes")
		if r.code != 0 {
			t.Fatalf("discard: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		r = outs.run(t, env, "journal", "export")
		if r.code != 0 || !strings.Contains(r.stdout, "issue 19 secrets check") || !strings.Contains(r.stdout, "tls_insecure") {
			t.Fatalf("journal export: exit %d, want the discard and tls_insecure\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("a URL that does not parse is described, not echoed", func(t *testing.T) {
		bad := fmt.Sprintf("amqps://admin:%s%%@127.0.0.1:%d/", planted, caNode.AMQPSPort)
		env := append(isolatedEnv(t), "DLQT_MGMT_URL="+caNode.MgmtsURL, "DLQT_TLS_CA_FILE="+caNode.CAFile)
		for _, args := range [][]string{
			{"--amqp-url", bad, "queues"},
			{"--amqp-url", bad, "--mgmt-url", strings.Replace(bad, "amqps://", "https://", 1), "queues"},
		} {
			r := outs.run(t, env, args...)
			if r.code == 0 {
				t.Fatalf("dlqt %v succeeded", args)
			}
			assertOneLine(t, r.stderr, "percent-encoded")
		}
		// Through a shell that stays: dlqt exits at once, maybe before
		// tmux's remain-on-exit is set, which would take its screen along.
		s := startProgram(t, "", 250, 40, append(env, "DLQT_AMQP_URL="+bad), "/bin/sh", "-c", `"$@"; exec sleep 60`, "sh", dlqtBin)
		outs.keepScreen(s)
		s.waitFor("percent-encoded")
	})

	t.Run("no output holds a secret", func(t *testing.T) {
		outs.mu.Lock()
		defer outs.mu.Unlock()
		files := 0
		for _, o := range outs.all {
			if strings.Contains(o.what, "(file ") {
				files++
			}
		}
		if len(outs.all) < 40 || files == 0 { // files: the discard's journal
			t.Fatalf("only %d outputs were kept, %d of them files", len(outs.all), files)
		}
		t.Logf("%d outputs checked, %d of them files dlqt wrote", len(outs.all), files)
		for _, o := range outs.all {
			for what, s := range secrets {
				if strings.Contains(o.text, s) {
					t.Errorf("%s shows %s:\n%s", o.what, what, o.text)
				}
			}
			if strings.Contains(o.text, "Hunter2") {
				t.Errorf("%s shows part of the planted password:\n%s", o.what, o.text)
			}
		}
	})
}

// timesOut runs dlqt queues against a port that accepts and never answers,
// with a 2 s connect timeout: it must fail within about that long, saying
// it timed out.
func timesOut(t *testing.T, outs *outputs, env []string, args ...string) {
	t.Helper()
	start := time.Now()
	r := outs.run(t, env, append(args, "queues")...)
	took := time.Since(start)
	if r.code == 0 {
		t.Fatalf("dlqt queues succeeded against a silent port: %s", r.stdout)
	}
	if took > 3500*time.Millisecond || took < 1900*time.Millisecond {
		t.Errorf("dlqt gave up after %s, want about the 2s timeout", took.Round(time.Millisecond))
	}
	msg := strings.ToLower(r.stderr)
	if !strings.Contains(msg, "2s") || !strings.Contains(msg, "time") && !strings.Contains(msg, "no answer") {
		t.Errorf("the error does not say nothing answered within 2s:\n%s", r.stderr)
	}
	// A port that answers nothing is not a TLS port that answered in TLS.
	if strings.Contains(msg, "amqps://") || strings.Contains(msg, "tls") {
		t.Errorf("the error blames TLS for a port that never answered:\n%s", r.stderr)
	}
}

// silentPort is a listener that accepts connections and never writes a
// byte, closed when the test ends.
func silentPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	_, port, _ := net.SplitHostPort(l.Addr().String())
	p, _ := strconv.Atoi(port)
	return p
}

// outputs keeps everything dlqt printed, for the secrets check.
type outputs struct {
	mu  sync.Mutex
	all []struct{ what, text string }
}

func (o *outputs) keep(what, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all = append(o.all, struct{ what, text string }{what, text})
}

func (o *outputs) run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	r := runDlqt(t, env, args...)
	what := t.Name() + ": dlqt " + strings.Join(args, " ")
	o.keep(what+" (stdout)", r.stdout)
	o.keep(what+" (stderr)", r.stderr)
	o.keepFiles(t, what, env)
	return r
}

// keepFiles keeps every file dlqt left under its HOME (journal, state,
// cache), as raw bytes.
func (o *outputs) keepFiles(t *testing.T, what string, env []string) {
	t.Helper()
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if home == "" {
		return
	}
	err := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		o.keep(what+" (file "+strings.TrimPrefix(path, home)+")", string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// keepScreen keeps the TUI's last screen when the (sub)test ends, passed
// or failed (before startTerm's cleanup kills the session).
func (o *outputs) keepScreen(s *term) {
	s.t.Cleanup(func() { o.keep(s.t.Name()+" (TUI screen)", s.screen()) })
}

func writeSecret(t *testing.T, dir, name, secret string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// seedParked declares queue in the node's vhost (the node is this test's
// own, "/" included) with one message, over the node's plain listener as
// guest.
func seedParked(t *testing.T, n *privnode.TLSNode, vhost, queue string) {
	t.Helper()
	conn, err := amqp.DialConfig(n.AMQPURL, amqp.Config{Vhost: vhost})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, false, false, amqp.Publishing{
		ContentType: "application/json", DeliveryMode: amqp.Persistent,
		Body: []byte(`{"id":"parked-` + queue + `"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := conf.WaitContext(ctx); err != nil || !ok {
		t.Fatalf("the seed message was not confirmed: %v", err)
	}
}
