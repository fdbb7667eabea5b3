package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// head is the chain's head kept outside the journal, in <journal>.head: an
// emptied, truncated-to-nothing or replaced journal file is a valid bbolt
// file with a valid chain, and only a record kept elsewhere tells.
type head struct {
	Entries uint64 `json:"entries"`
	Hash    string `json:"head"`
}

func headPath(path string) string { return path + ".head" }

// readHead returns the recorded head; ok is false when there is none yet.
func readHead(path string) (h head, ok bool, err error) {
	data, err := os.ReadFile(headPath(path))
	if errors.Is(err, os.ErrNotExist) {
		return head{}, false, nil
	}
	if err != nil {
		return head{}, false, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return head{}, false, damaged(path, "its head file %s does not read (%v)", headPath(path), err)
	}
	return h, true, nil
}

// writeHead replaces the head file atomically (write, sync, rename).
func writeHead(path string, h head) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return replaceFile(headPath(path), data)
}

// replaceFile replaces dst with data atomically: a temporary file beside
// it, written and synced, renamed over it.
func replaceFile(dst string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// checkEmpty refuses a missing or empty journal file whose head file says
// entries were written to it.
func checkEmpty(path string, h head, ok bool, what string) error {
	if ok && h.Entries > 0 {
		return damaged(path, "it is %s but %d entries were written to it (head file %s)", what, h.Entries, headPath(path))
	}
	return nil
}

// checkHead compares the entries in the file with the recorded head. A
// head behind the file is a crash between an append and its head write,
// and is fine when the file's entry at the head matches it.
func checkHead(path string, es []Entry, h head, ok bool) error {
	atHead := ""
	if ok && h.Entries > 0 && h.Entries <= uint64(len(es)) {
		atHead = es[h.Entries-1].Hash
	}
	return checkHeadAt(path, uint64(len(es)), atHead, h, ok)
}

// checkHeadAt is checkHead for a journal of n entries whose entry
// h.Entries has the hash atHead.
func checkHeadAt(path string, n uint64, atHead string, h head, ok bool) error {
	if !ok || h.Entries == 0 {
		return nil
	}
	if n < h.Entries {
		return damaged(path, "it holds %d entries but %d were written to it (head file %s): entries were removed or the file was replaced", n, h.Entries, headPath(path))
	}
	if atHead != h.Hash {
		return damaged(path, "its entry %d is not the one written (head file %s records another hash): the file was replaced", h.Entries, headPath(path))
	}
	return nil
}
