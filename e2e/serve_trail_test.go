package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// dlqt serve with the team's trail: while the trail cannot be written, a
// viewer still connects and reads (the session's start and end are
// written to the server's journal and wait for the trail) and an
// operator's discard is refused with nothing moved; once the trail is back,
// the next entry takes the waiting ones to the stream first, every record
// is signed by the server's host key, and both the stream and the server's
// journal verify.
func TestServeReadsWhileTheTrailIsOfflineAndCatchesUp(t *testing.T) {
	bed := newReplayBed(t, "serve-trail")
	ids := bed.park(2)
	if _, err := bed.ch.QueueDeclare("dlqt.audit", true, false, false, false, amqp.Table{"x-queue-type": "stream"}); err != nil {
		t.Fatal(err)
	}
	// The server's broker user may not write through the default
	// exchange, which the trail is published through.
	perms := brokertest.Perms{Configure: ".*", Write: `^dlqt\.lease\.|^amq\.gen-|^orders$`, Read: ".*"}
	as, user := brokertest.User(t, bed.cfg, &perms, "management")
	env := append(brokerEnv(t, as), "DLQT_JOURNAL="+bed.journal, "DLQT_AUDIT_STREAM=dlqt.audit")
	b := startServe(t, env)

	r := b.ssh("bob", "groups", bedParking)
	if r.code != 0 || !strings.Contains(r.stdout, "rejected") {
		t.Fatalf("bob's read with the trail offline: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = b.ssh("alice", "discard", bedParking, "--id", ids[0], "--reason", "dup", "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, "the trail is offline") {
		t.Fatalf("alice's discard with the trail offline: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bed.waitDepth(bedParking, 2)

	rh, err := bed.cfg.ManagementClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rh.UpdatePermissionsIn(bed.cfg.Vhost, user, rabbithole.Permissions{Configure: perms.Configure, Write: perms.Write + `|^amq\.default$`, Read: perms.Read}); err != nil {
		t.Fatal(err)
	}
	r = b.ssh("alice", "discard", bedParking, "--id", ids[0], "--reason", "dup", "--yes")
	if r.code != 0 {
		t.Fatalf("alice's discard with the trail back: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bed.waitDepth(bedParking, 1)

	// Every record is signed by the server's host key, which verify
	// names only where it is known.
	host := b.hostKeyFingerprint()
	v := runDlqt(t, env, "journal", "verify", "--stream")
	if v.code != 0 || !strings.Contains(v.stdout, "1 writer") || !strings.Contains(v.stdout, "signed by "+host+" (a key not known here") {
		t.Fatalf("verify --stream: exit %d, want one writer signed by the host key %s, not known\n%s%s", v.code, host, v.stdout, v.stderr)
	}
	env = append(env, "DLQT_SERVER_KEY="+filepath.Join(b.dir, "host_key.pub"))
	v = runDlqt(t, env, "journal", "verify", "--stream")
	if v.code != 0 || !strings.Contains(v.stdout, "signed by "+host+" (the dlqt serve key of server_key)") {
		t.Fatalf("verify --stream told the server's key: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	v = runDlqt(t, env, "journal", "verify")
	if v.code != 0 || !strings.Contains(v.stdout, "the journal matches what the stream holds") {
		t.Fatalf("verify of the server's journal: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	// Every session, the offline ones first, is on the stream.
	x := runDlqt(t, env, "journal", "export", "--stream")
	if x.code != 0 {
		t.Fatalf("export --stream: exit %d\n%s", x.code, x.stderr)
	}
	var sessions []string
	for _, line := range strings.Split(strings.TrimSpace(x.stdout), "\n") {
		for _, who := range []string{"bob", "alice"} {
			if strings.Contains(line, `"action":"session_start"`) && strings.Contains(line, `"actor":"`+who+`"`) {
				sessions = append(sessions, who)
			}
		}
	}
	if strings.Join(sessions, ",") != "bob,alice,alice" {
		t.Fatalf("sessions started on the stream: %v, want bob, alice, alice in order\n%s", sessions, x.stdout)
	}
}

// hostKeyFingerprint is the server's host key as its first log line names it.
func (b *serveBed) hostKeyFingerprint() string {
	b.t.Helper()
	log := b.waitLog("host key ")
	_, after, _ := strings.Cut(log, "host key ")
	fp, _, _ := strings.Cut(after, ",")
	if !strings.HasPrefix(fp, "SHA256:") {
		b.t.Fatalf("no host key in the server's log:\n%s", log)
	}
	return fp
}
