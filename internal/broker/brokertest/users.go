package brokertest

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/dlqt/dlqt/internal/broker"
)

// Perms are a test user's regexes in the test's vhost; nil grants none.
type Perms struct{ Configure, Write, Read string }

// User creates a uniquely named user (dlqt-test-<random>) with tags and,
// when perms is not nil, those permissions in cfg.Vhost; it is deleted when
// the test ends. The returned config logs in as that user; name is its name.
func User(t testing.TB, cfg broker.Config, perms *Perms, tags ...string) (as broker.Config, name string) {
	t.Helper()
	rh, err := cfg.ManagementClient()
	if err != nil {
		t.Fatal(err)
	}
	var b [5]byte
	_, _ = rand.Read(b[:])
	name = "dlqt-test-user-" + hex.EncodeToString(b[:])
	const password = "dlqt-test-pw"
	if _, err := rh.PutUser(name, rabbithole.UserSettings{Password: password, Tags: rabbithole.UserTags(tags)}); err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := rh.DeleteUser(name); err != nil {
			t.Errorf("cleanup: delete user %s: %v", name, err)
		}
	})
	if perms != nil {
		p := rabbithole.Permissions{Configure: perms.Configure, Write: perms.Write, Read: perms.Read}
		if _, err := rh.UpdatePermissionsIn(cfg.Vhost, name, p); err != nil {
			t.Fatalf("grant %s in %s: %v", name, cfg.Vhost, err)
		}
	}
	as = cfg
	for _, raw := range []*string{&as.AMQPURL, &as.MgmtURL} {
		u, err := url.Parse(*raw)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(name, password)
		*raw = u.String()
	}
	return as, name
}
