// Package trail is the team's audit trail on a RabbitMQ stream: every dlqt
// journal (a writer: one journal file of one user on one host) mirrors its
// hash-chained entries there before they are committed, and anyone may
// read the whole trail back from its first offset and check each writer's
// chain. The stream is replicated and append-only where the local journal
// is a file its owner can rewrite; a writer's chain on the stream names
// what a rewritten journal lost or changed.
//
// This package is the record format and the checks; reading and writing
// the stream is package broker's.
package trail

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/journal"
)

// Record is one journal entry on the stream, with its writer and, when
// the writer has a key (the dlqt serve host key, or this user's), the
// writer's signature of (writer, seq, hash): anyone who may publish to the
// stream can write a record that chains, only the writer's key signs it.
type Record struct {
	Writer string        `json:"writer"`
	Entry  journal.Entry `json:"entry"`
	Key    string        `json:"key,omitempty"` // authorized_keys line
	Sig    string        `json:"sig,omitempty"` // armored SSH signature of signedText

	// Offset is where the stream holds it; set when read, not written.
	Offset int64 `json:"offset"`
}

// Writer names the writer of a journal: user@host:path. Two dlqt processes
// on one journal file are one writer (the file serialises their appends
// into one chain); two hosts or two files are two.
func Writer(host, journalPath string) string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if abs, err := filepath.Abs(journalPath); err == nil {
		journalPath = abs
	}
	return name + "@" + host + ":" + journalPath
}

const namespace = "dlqt-trail"

// signedText is what a record's signature covers: the entry's hash covers
// its content and, through prev_hash, the writer's chain before it.
func signedText(writer string, e journal.Entry) string {
	return fmt.Sprintf("dlqt trail v1\nwriter %s\nseq %d\nhash %s\n", writer, e.Seq, e.Hash)
}

// Encode is the body of the stream message for e, signed by signer when
// it is not nil.
func Encode(writer string, e journal.Entry, signer ssh.Signer) ([]byte, error) {
	if writer == "" {
		return nil, errors.New("trail: an entry needs its writer")
	}
	r := Record{Writer: writer, Entry: e}
	if signer != nil {
		sig, err := sshsig.Sign(strings.NewReader(signedText(writer, e)), signer, sshsig.HashSHA512, namespace)
		if err != nil {
			return nil, fmt.Errorf("trail: sign entry %d: %w", e.Seq, err)
		}
		r.Key = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
		r.Sig = string(sshsig.Armor(sig))
	}
	return json.Marshal(r)
}

// signer checks r's signature and returns the fingerprint of the key that
// made it ("" for an unsigned record).
func (r Record) signer() (string, error) {
	if r.Key == "" && r.Sig == "" {
		return "", nil
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(r.Key))
	if err != nil {
		return "", fmt.Errorf("its key does not read: %v", err)
	}
	sig, err := sshsig.Unarmor([]byte(r.Sig))
	if err != nil {
		return "", fmt.Errorf("its signature does not read: %v", err)
	}
	fp := ssh.FingerprintSHA256(key)
	if err := sshsig.Verify(strings.NewReader(signedText(r.Writer, r.Entry)), sig, key, sig.HashAlgorithm, namespace); err != nil {
		return "", fmt.Errorf("its signature by %s does not verify", fp)
	}
	return fp, nil
}

// Decode reads a stream message's body; offset is where it was read.
func Decode(body []byte, offset int64) (Record, error) {
	var r Record
	if err := json.Unmarshal(body, &r); err != nil {
		return Record{}, fmt.Errorf("not a dlqt trail record: %w", err)
	}
	if r.Writer == "" || r.Entry.Seq == 0 || r.Entry.Hash == "" {
		return Record{}, errors.New("not a dlqt trail record: no writer, sequence or hash")
	}
	r.Offset = offset
	return r, nil
}

// Problem is one thing wrong with the trail, at one offset of the stream
// (-1: none, a record that is missing).
type Problem struct {
	Offset int64
	Writer string
	Seq    uint64
	What   string
}

func (p Problem) String() string {
	at := "offset " + fmt.Sprint(p.Offset)
	if p.Offset < 0 {
		at = "missing"
	}
	if p.Writer == "" {
		return at + ": " + p.What
	}
	return fmt.Sprintf("%s, writer %s, entry %d: %s", at, p.Writer, p.Seq, p.What)
}

// Chain is what the stream holds of one writer.
type Chain struct {
	Writer      string
	First, Last uint64 // entries First..Last, as far as they chain
	Records     int
	Duplicates  int // the same entry published twice (a confirm lost and sent again): not a fault
	// Replaced are the offsets of attempts the writer rolled back because
	// the stream did not confirm them, though it holds them, each named by
	// the entry that took its sequence number (journal.Entry.Supersedes).
	// Not a fault; their actions never started.
	Replaced []int64
	// Key is the fingerprint of the key that signed the writer's first
	// record ("" unsigned): every later one must be signed by it.
	Key      string
	lastHash string
	lastPrev string                // the tip's prev_hash
	lastAt   int64                 // the tip's offset
	seen     map[uint64]hashPrefix // seq -> hash, for forks
}

// replaces says whether e takes the place of the writer's last record: an
// attempt at the same sequence number, after the same entry, that e names
// as unconfirmed. Only the last can be replaced: an entry that another
// chains to was confirmed, and a rewritten journal cannot name it away.
func (c *Chain) replaces(e journal.Entry) bool {
	return e.Seq == c.Last && e.PrevHash == c.lastPrev && slices.Contains(e.Supersedes, c.lastHash)
}

// Verify checks every writer's chain in the records, in stream order: each
// record's hash is its content's, each follows its writer's last one
// (sequence + 1, prev_hash its hash). The first record of a writer may
// start anywhere: its journal may have had entries before the trail was
// set up. A record that is unreadable, forged (its hash is not its
// content's), forked (a second, different entry for a sequence), out of
// order or after a gap is named with its offset and writer.
func Verify(rs []Record, unreadable []Problem) (chains []*Chain, problems []Problem) {
	var v Verifier
	for _, p := range unreadable {
		v.Unreadable(p)
	}
	for _, r := range rs {
		v.Add(r)
	}
	return v.Result()
}

// Verifier is Verify one record at a time, as the stream is read: it keeps
// a few bytes a record (each writer's sequence numbers and hash prefixes,
// for forks), never the records.
type Verifier struct {
	by       map[string]*Chain
	chains   []*Chain
	problems []Problem
}

// Unreadable counts a message of the stream that is not a record.
func (v *Verifier) Unreadable(p Problem) { v.problems = append(v.problems, p) }

// Add checks the next record of the stream.
func (v *Verifier) Add(r Record) {
	if v.by == nil {
		v.by = map[string]*Chain{}
	}
	e := r.Entry
	bad := func(what string, args ...any) {
		v.problems = append(v.problems, Problem{Offset: r.Offset, Writer: r.Writer, Seq: e.Seq, What: fmt.Sprintf(what, args...)})
	}
	if !journal.CheckHash(e) {
		bad("its hash is not its content's: forged, or changed after it was written")
		return
	}
	fp, err := r.signer()
	if err != nil {
		bad("%v: forged", err)
		return
	}
	c, ok := v.by[r.Writer]
	if !ok {
		c = &Chain{Writer: r.Writer, First: e.Seq, Last: e.Seq, Records: 1, Key: fp, lastHash: e.Hash, lastPrev: e.PrevHash, lastAt: r.Offset,
			seen: map[uint64]hashPrefix{e.Seq: prefixOf(e.Hash)}}
		v.by[r.Writer] = c
		v.chains = append(v.chains, c)
		return
	}
	if fp != c.Key {
		switch {
		case fp == "":
			bad("unsigned, where this writer's records are signed by %s: forged", c.Key)
		case c.Key == "":
			bad("signed by %s, where this writer's first record is unsigned", fp)
		default:
			bad("signed by %s, not by this writer's key %s: forged", fp, c.Key)
		}
		return
	}
	c.Records++
	if h, dup := c.seen[e.Seq]; dup {
		switch {
		case h == prefixOf(e.Hash):
			c.Duplicates++
		case c.replaces(e):
			c.Replaced = append(c.Replaced, c.lastAt)
			c.seen[e.Seq], c.lastHash, c.lastAt = prefixOf(e.Hash), e.Hash, r.Offset
		default:
			bad("a second, different entry %d of this writer (the chain forks: its journal was rewritten)", e.Seq)
		}
		return
	}
	switch {
	case e.Seq < c.Last:
		bad("comes after entry %d of the same writer (out of order)", c.Last)
	case e.Seq > c.Last+1:
		bad("entries %d-%d of this writer are not on the stream before it", c.Last+1, e.Seq-1)
	case e.PrevHash != c.lastHash:
		bad("does not follow entry %d (prev_hash %.12s…, want %.12s…)", c.Last, e.PrevHash, c.lastHash)
	}
	c.seen[e.Seq] = prefixOf(e.Hash)
	if e.Seq > c.Last {
		c.Last, c.lastHash, c.lastPrev, c.lastAt = e.Seq, e.Hash, e.PrevHash, r.Offset
	}
}

// Result is every writer's chain, by writer, and every problem found, in
// stream order.
func (v *Verifier) Result() (chains []*Chain, problems []Problem) {
	chains = slices.Clone(v.chains)
	slices.SortFunc(chains, func(a, b *Chain) int { return strings.Compare(a.Writer, b.Writer) })
	return chains, v.problems
}

// hashPrefix is what a chain keeps of each of its entries' hashes to tell
// a duplicate from a fork: 128 bits of SHA-256, so that a record made to
// pass for a duplicate costs 2^128 hashes, in 24 bytes a record rather
// than a whole hash string's 80.
type hashPrefix [16]byte

func prefixOf(hash string) hashPrefix {
	var p hashPrefix
	if b, err := hex.DecodeString(hash); err == nil && len(b) >= len(p) {
		copy(p[:], b)
		return p
	}
	copy(p[:], hash) // not hex (CheckHash refused such a record already)
	return p
}

// Standing is what counts of rs: the records Verify found nothing wrong
// with (problems) and that no later attempt replaced (chains).
func Standing(rs []Record, chains []*Chain, problems []Problem) []Record {
	out := make(map[int64]bool)
	for _, p := range problems {
		if p.Offset >= 0 {
			out[p.Offset] = true
		}
	}
	for _, c := range chains {
		for _, at := range c.Replaced {
			out[at] = true
		}
	}
	standing := make([]Record, 0, len(rs))
	for _, r := range rs {
		if !out[r.Offset] {
			standing = append(standing, r)
		}
	}
	return standing
}

// CrossCheck compares a local journal's entries with what the stream holds
// of its writer: an entry the stream has and the journal lacks (a journal
// truncated or put back from an older copy), an entry that differs, and an
// entry written after the trail began that the stream never confirmed.
// Entries from before the writer's first record on the stream are not on
// it and are not compared.
//
// Unsent are the journal's last entries, after the last the stream holds,
// when each is journal.Deferrable (a session's start or end written while
// the trail was offline): they go to the stream before the writer's next
// entry, and are not a problem.
func CrossCheck(local []journal.Entry, writer string, rs []Record) (problems []Problem, unsent []uint64) {
	onStream := map[uint64]Record{}
	var first, last uint64
	for _, r := range rs {
		if r.Writer != writer {
			continue
		}
		// the first record of a sequence number stands, unless a later
		// one names it as an unconfirmed attempt it replaces
		if had, ok := onStream[r.Entry.Seq]; !ok || slices.Contains(r.Entry.Supersedes, had.Entry.Hash) {
			onStream[r.Entry.Seq] = r
		}
		if first == 0 || r.Entry.Seq < first {
			first = r.Entry.Seq
		}
		last = max(last, r.Entry.Seq)
	}
	tail := len(local)
	for tail > 0 && local[tail-1].Seq > last && journal.Deferrable(local[tail-1]) {
		tail--
	}
	for _, e := range local[tail:] {
		unsent = append(unsent, e.Seq)
	}
	local = local[:tail]
	if first == 0 {
		if len(local) == 0 {
			return nil, unsent
		}
		return []Problem{{Offset: -1, Writer: writer, Seq: local[0].Seq, What: fmt.Sprintf("the stream holds none of this journal's %d entries", len(local))}}, unsent
	}
	have := map[uint64]bool{}
	for _, e := range local {
		have[e.Seq] = true
		r, ok := onStream[e.Seq]
		switch {
		case e.Seq < first:
		case !ok:
			problems = append(problems, Problem{Offset: -1, Writer: writer, Seq: e.Seq, What: "in the journal but never confirmed by the stream"})
		case r.Entry.Hash != e.Hash:
			problems = append(problems, Problem{Offset: r.Offset, Writer: writer, Seq: e.Seq, What: "the journal's entry differs from the stream's (the journal was rewritten)"})
		}
	}
	var lacks []uint64
	for seq := range onStream {
		if !have[seq] {
			lacks = append(lacks, seq)
		}
	}
	slices.Sort(lacks)
	if len(lacks) > 0 {
		r := onStream[lacks[0]]
		problems = append(problems, Problem{Offset: r.Offset, Writer: writer, Seq: lacks[0],
			What: fmt.Sprintf("%d entr%s on the stream (%s) missing from the journal: it was truncated or put back from an older copy",
				len(lacks), plural(len(lacks), "y", "ies"), runs(lacks))})
	}
	return problems, unsent
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// runs writes ascending numbers as ranges: 3-7, 9.
func runs(ns []uint64) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprint(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
