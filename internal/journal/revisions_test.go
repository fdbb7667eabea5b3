package journal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// TestRevisionBodiesStayOutOfTheEntries: a kept body is read back by its
// SHA-256 and never appears in an entry or an export; a body that no
// longer hashes to its key is refused.
func TestRevisionBodiesStayOutOfTheEntries(t *testing.T) {
	j := open(t)
	body := []byte(`{"password":"hunter2-s3cret","amount":7}`)
	sum, err := j.PutRevisionBody(body)
	if err != nil || sum != triage.BodySHA256(body) {
		t.Fatalf("put: %s, %v", sum, err)
	}
	if _, err := j.Append(Entry{Action: triage.ActionEdit, Actor: "alice", Details: map[string]any{"revision": map[string]any{"sha256_after": sum}}}); err != nil {
		t.Fatal(err)
	}
	got, err := j.RevisionBody(sum)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read back %s, %v", got, err)
	}
	var out bytes.Buffer
	if _, err := j.Export(&out, "jsonl", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), sum) {
		t.Errorf("export:\n%s", out.String())
	}
	if err := j.Verify(); err != nil {
		t.Errorf("verify: %v", err)
	}
	if _, err := j.RevisionBody(triage.BodySHA256([]byte("other"))); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("an unknown body: %v", err)
	}
	err = j.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRevisionBodies).Put([]byte(sum), []byte(`{"password":"hunter2-s3cret","amount":70000}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.RevisionBody(sum); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a body changed under its key was read: %v", err)
	}
}
