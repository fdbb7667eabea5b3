package broker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
)

// leastPrivilegeUser creates a user with the given tag (and, if grant,
// full permissions on the fixture's vhost only), deleted when the test
// ends, and returns the fixture's config logged in as that user.
func leastPrivilegeUser(t *testing.T, f *fixture, tag string, grant bool) (broker.Config, string) {
	t.Helper()
	rh := f.management()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "dlqt-test-" + tag + "-" + hex.EncodeToString(b[:])
	if _, err := rh.PutUser(name, rabbithole.UserSettings{Password: "pw", Tags: rabbithole.UserTags{tag}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = rh.DeleteUser(name) })
	if grant {
		if _, err := rh.UpdatePermissionsIn(f.cfg.Vhost, name, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := f.cfg
	for _, raw := range []*string{&cfg.AMQPURL, &cfg.MgmtURL} {
		u, err := url.Parse(*raw)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(name, "pw")
		*raw = u.String()
	}
	return cfg, name
}

// Responders use least-privilege accounts: a monitoring or management user
// with permissions on the vhost can do everything dlqt reads, although
// GET /api/vhosts/{vhost} answers such users 401 "Not administrator user".
func TestLeastPrivilegeUsersCanTriage(t *testing.T) {
	f := newFixture(t, "access")
	f.declare("parked", nil)
	f.publish("parked", 3, 0)
	for _, tag := range []string{"monitoring", "management"} {
		t.Run(tag, func(t *testing.T) {
			cfg, _ := leastPrivilegeUser(t, f, tag, true)
			l, err := broker.Dial(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Dial as a %s user: %v", tag, err)
			}
			defer l.Close()
			if _, err := l.Topology(context.Background()); err != nil {
				t.Errorf("Topology: %v", err)
			}
			b, err := l.Browse(context.Background(), "parked", triage.BrowseOptions{})
			if err != nil || len(b.Messages) != 3 {
				t.Errorf("Browse: %d messages, %v", len(b.Messages), err)
			}
		})
	}
}

func TestAUserWithoutVhostPermissionsIsToldWhatIsMissing(t *testing.T) {
	f := newFixture(t, "noperm")
	cfg, name := leastPrivilegeUser(t, f, "monitoring", false)
	_, err := broker.Dial(context.Background(), cfg)
	want := "management API: user " + name + " may not read vhost " + `"` + f.cfg.Vhost + `"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v\nwant it to start %q", err, want)
	}
}

// A management URL with a wrong path answers 404 to everything: the error
// names the URL that was asked.
func TestAWrongManagementPathNamesTheURL(t *testing.T) {
	f := newFixture(t, "badpath")
	cfg := f.cfg
	cfg.MgmtURL = strings.TrimSuffix(cfg.MgmtURL, "/") + "/rabbitmq"
	_, err := broker.Dial(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), cfg.MgmtURL+"/api/whoami") || !strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v, want a 404 naming %s/api/whoami", err, cfg.MgmtURL)
	}
}
