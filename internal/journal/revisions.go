package journal

import (
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/dlqt/dlqt/internal/triage"
)

// bucketRevisionBodies keeps the edited bodies of revisions by their
// SHA-256, outside the hash chain and out of every entry. Export, verify,
// the TUI's journal screen and every journal command read entries only, so
// whoever may read the journal (a viewer of `dlqt serve` included) never
// reads a payload an edit carried; a replay reads a body by the hash its
// revision's entry names, and checks it.
var bucketRevisionBodies = []byte("revision-bodies")

// PutRevisionBody keeps body for a revision's replay and returns its
// SHA-256, its key. The same body twice is kept once.
func (j *Journal) PutRevisionBody(body []byte) (string, error) {
	sum := triage.BodySHA256(body)
	err := guard(j.path, func() error {
		return j.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketRevisionBodies)
			if err != nil {
				return err
			}
			return b.Put([]byte(sum), body)
		})
	})
	if err != nil {
		return "", fmt.Errorf("journal %s: keep a revision's body: %w", j.path, err)
	}
	return sum, nil
}

// RevisionBody is the revision body whose SHA-256 is sum, checked against
// it: a body that does not hash to its key is refused, never published.
func (j *Journal) RevisionBody(sum string) ([]byte, error) {
	var body []byte
	err := guard(j.path, func() error {
		return j.db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketRevisionBodies); b != nil {
				body = slices.Clone(b.Get([]byte(sum)))
			}
			return nil
		})
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	case body == nil:
		return nil, fmt.Errorf("journal %s: the body of revision sha256 %s: %w", j.path, sum, triage.ErrNotFound)
	case triage.BodySHA256(body) != sum:
		return nil, fmt.Errorf("journal %s: the body kept for revision sha256 %s hashes to %s: changed since, refused", j.path, sum, triage.BodySHA256(body))
	}
	return body, nil
}

// PutRevisionBody keeps body for a revision's replay (see
// Journal.PutRevisionBody).
func (s *Shared) PutRevisionBody(body []byte) (sum string, err error) {
	if err := s.appendable(); err != nil {
		return "", err
	}
	err = s.write(func(j *Journal) error {
		sum, err = j.PutRevisionBody(body)
		return err
	})
	return sum, err
}

// RevisionBody reads a revision's body by its SHA-256, checked (see
// Journal.RevisionBody).
func (s *Shared) RevisionBody(sum string) (body []byte, err error) {
	err = s.read(func(j *Journal) error {
		body, err = j.RevisionBody(sum)
		return err
	})
	return body, err
}
