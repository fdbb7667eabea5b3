package trail

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
)

// entries writes n entries to a fresh journal and returns them as sealed.
func entries(t *testing.T, n int, reason string) []journal.Entry {
	t.Helper()
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := range n {
		if _, err := j.Append(journal.Entry{Action: triage.ActionTag, Actor: "alice", Vhost: "/", Queue: "q", MessageIDs: []string{"m"}, Reason: reason + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func records(writer string, es []journal.Entry) []Record {
	out := make([]Record, len(es))
	for i, e := range es {
		out[i] = Record{Writer: writer, Entry: e}
	}
	return out
}

// onStream numbers the records' offsets in the order given.
func onStream(rs ...Record) []Record {
	for i := range rs {
		rs[i].Offset = int64(i)
	}
	return rs
}

func TestVerify(t *testing.T) {
	a, b := entries(t, 4, "a"), entries(t, 3, "b")
	ra, rb := records("alice@a:/j", a), records("bob@b:/j", b)
	forged := ra[2]
	forged.Entry.Reason = "something else"
	other := entries(t, 4, "x") // another chain under alice's name: a rewritten journal
	fork := Record{Writer: "alice@a:/j", Entry: other[2]}
	for _, c := range []struct {
		name  string
		rs    []Record
		want  []string // one substring per problem, in order
		first uint64
	}{
		{"two writers interleaved", onStream(ra[0], rb[0], ra[1], rb[1], rb[2], ra[2], ra[3]), nil, 1},
		{"a writer that joined the trail late", onStream(ra[2], ra[3]), nil, 3},
		{"a duplicate is no fault", onStream(ra[0], ra[1], ra[1], ra[2]), nil, 1},
		{"forged", onStream(ra[0], ra[1], forged, ra[3]), []string{"offset 2, writer alice@a:/j, entry 3: its hash is not its content's", "offset 3, writer alice@a:/j, entry 4: entries 3-3 of this writer are not on the stream"}, 1},
		{"missing", onStream(ra[0], ra[2], ra[3]), []string{"offset 1, writer alice@a:/j, entry 3: entries 2-2"}, 1},
		{"reordered", onStream(ra[0], ra[2], ra[1], ra[3]), []string{"offset 1, writer alice@a:/j, entry 3: entries 2-2", "offset 2, writer alice@a:/j, entry 2: comes after entry 3"}, 1},
		{"forked", onStream(ra[0], ra[1], ra[2], fork), []string{"offset 3, writer alice@a:/j, entry 3: a second, different entry 3"}, 1},
		{"a link that does not hold", onStream(ra[0], ra[1], Record{Writer: "alice@a:/j", Entry: other[2]}), []string{"offset 2, writer alice@a:/j, entry 3: does not follow entry 2"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			chains, problems := Verify(c.rs, nil)
			if len(problems) != len(c.want) {
				t.Fatalf("problems %v, want %d: %v", problems, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(problems[i].String(), w) {
					t.Errorf("problem %d = %q, want it to say %q", i, problems[i], w)
				}
			}
			var alice *Chain
			for _, ch := range chains {
				if ch.Writer == "alice@a:/j" {
					alice = ch
				}
			}
			if alice == nil || alice.First != c.first {
				t.Fatalf("alice's chain = %+v, want it from entry %d", alice, c.first)
			}
		})
	}
}

func TestCrossCheck(t *testing.T) {
	es := entries(t, 5, "a")
	w := "alice@a:/j"
	rs := onStream(records(w, es)...)
	for _, c := range []struct {
		name  string
		local []journal.Entry
		rs    []Record
		want  []string
	}{
		{"the same", es, rs, nil},
		{"the trail began at entry 3", es, rs[2:], nil},
		{"truncated", es[:2], rs, []string{"offset 2, writer alice@a:/j, entry 3: 3 entries on the stream (3-5) missing from the journal"}},
		{"an entry the stream never confirmed", es, rs[:4], []string{"missing, writer alice@a:/j, entry 5: in the journal but never confirmed"}},
		{"rewritten", append(append([]journal.Entry{}, es[:3]...), entries(t, 5, "z")[3:]...), rs,
			[]string{"offset 3, writer alice@a:/j, entry 4: the journal's entry differs", "offset 4, writer alice@a:/j, entry 5: the journal's entry differs"}},
		{"nothing on the stream", es, nil, []string{"the stream holds none of this journal's 5 entries"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems, unsent := CrossCheck(c.local, w, c.rs)
			if len(unsent) != 0 {
				t.Errorf("unsent %v, want none: no entry is a session's", unsent)
			}
			if len(problems) != len(c.want) {
				t.Fatalf("problems %v, want %v", problems, c.want)
			}
			for i, want := range c.want {
				if !strings.Contains(problems[i].String(), want) {
					t.Errorf("problem %d = %q, want it to say %q", i, problems[i], want)
				}
			}
		})
	}
}

func TestEncodeDecode(t *testing.T) {
	e := entries(t, 1, "a")[0]
	body, err := Encode("alice@a:/j", e, signer(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(body, 42)
	if err != nil {
		t.Fatal(err)
	}
	if r.Writer != "alice@a:/j" || r.Offset != 42 || r.Entry.Hash != e.Hash || !journal.CheckHash(r.Entry) || r.Key == "" || r.Sig == "" {
		t.Fatalf("decoded %+v", r)
	}
	for _, bad := range []string{``, `{}`, `{"writer":"w","entry":{"seq":0}}`, `[1]`, `{"writer":"w","entry":{"seq":1,"hash":""}}`} {
		if _, err := Decode([]byte(bad), 0); err == nil {
			t.Errorf("Decode(%q) took it", bad)
		}
	}
	if _, err := Encode("", e, nil); err == nil {
		t.Error("Encode took an entry without its writer")
	}
}

// FuzzDecode: whatever a stream holds (anyone with write access may publish
// into it), reading and checking it never panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"writer":"w","entry":{"seq":1,"hash":"ab","time":"2026-01-01T00:00:00Z","details":{"a":[1,{"b":null}]}}}`))
	f.Add([]byte(`{"writer":"w","entry":{"seq":18446744073709551615,"hash":"x","prev_hash":"y"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Decode(body, 0)
		if err != nil {
			return
		}
		Verify([]Record{r, r}, nil)
		CrossCheck([]journal.Entry{r.Entry}, r.Writer, []Record{r})
	})
}

func signer(t *testing.T) ssh.Signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signed encodes es as writer's records signed by s (nil: unsigned), as
// they are read back from the stream.
func signed(t *testing.T, writer string, s ssh.Signer, es ...journal.Entry) []Record {
	t.Helper()
	out := make([]Record, len(es))
	for i, e := range es {
		body, err := Encode(writer, e, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A record that chains (its hash recomputed, its prev_hash the writer's
// last) is still found when the writer signs and the forger cannot.
func TestVerifySignatures(t *testing.T) {
	es := entries(t, 3, "a")
	alice, mallory := signer(t), signer(t)
	w := "alice@a:/j"
	good := signed(t, w, alice, es...)
	// The next entry of alice's chain, made and hashed by someone else.
	next := es[2]
	next.Seq, next.PrevHash, next.Reason = 4, es[2].Hash, "approved by nobody"
	next.Hash = journal.HashOf(next) // the hash is public: anyone can chain
	if !journal.CheckHash(next) {
		t.Fatal("HashOf did not give the entry's hash")
	}
	tampered := good[1]
	tampered.Sig = good[0].Sig
	for _, c := range []struct {
		name string
		rs   []Record
		want []string
	}{
		{"signed chain", onStream(good...), nil},
		{"the next entry signed by another key", onStream(append(append([]Record{}, good...), signed(t, w, mallory, next)...)...), []string{"offset 3, writer alice@a:/j, entry 4: signed by SHA256:"}},
		{"the next entry unsigned", onStream(append(append([]Record{}, good...), signed(t, w, nil, next)...)...), []string{"offset 3, writer alice@a:/j, entry 4: unsigned, where this writer's records are signed"}},
		{"a signature moved to another record", onStream(good[0], tampered, good[2]), []string{"offset 1, writer alice@a:/j, entry 2: its signature by SHA256:", "offset 2, writer alice@a:/j, entry 3: entries 2-2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			chains, problems := Verify(c.rs, nil)
			if len(problems) != len(c.want) {
				t.Fatalf("problems %v, want %v", problems, c.want)
			}
			for i, want := range c.want {
				if !strings.Contains(problems[i].String(), want) {
					t.Errorf("problem %d = %q, want it to say %q", i, problems[i], want)
				}
			}
			if len(chains) != 1 || chains[0].Key != ssh.FingerprintSHA256(alice.PublicKey()) {
				t.Errorf("chains %+v, want alice's signed by her key", chains)
			}
		})
	}
}

// lostConfirms writes entries one to four to a fresh journal whose mirror
// (the stream) holds every attempt it was handed, and does not confirm
// the first unconfirmed attempts at entry 2: its leader died between
// writing and confirming. It returns the stream's records and the journal.
func lostConfirms(t *testing.T, unconfirmed int) (stream []Record, local []journal.Entry) {
	t.Helper()
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	m := &lossyStream{w: "alice@a:/j", fail: map[int]bool{}}
	for i := range unconfirmed {
		m.fail[1+i] = true
	}
	j.SetMirror(m)
	for i := 0; len(m.confirmed) < 4; i++ {
		j.Append(journal.Entry{Action: triage.ActionTag, Actor: "alice", Queue: "q", MessageIDs: []string{"m"}, Reason: string(rune('a' + i))})
	}
	local, err = j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return onStream(m.held...), local
}

// lossyStream holds every entry handed to it; the attempts numbered in
// fail (from 0) are held but not confirmed.
type lossyStream struct {
	w         string
	fail      map[int]bool
	held      []Record
	confirmed []journal.Entry
}

func (s *lossyStream) Mirror(e journal.Entry) error {
	n := len(s.held)
	s.held = append(s.held, Record{Writer: s.w, Entry: e})
	if s.fail[n] {
		return errors.New("no confirm")
	}
	s.confirmed = append(s.confirmed, e)
	return nil
}

// An attempt the stream holds but never confirmed, named by the entry that
// took its place, is a replaced attempt: not a fork, and not counted. A
// journal rewritten after the stream confirmed cannot pass for one.
func TestAnUnconfirmedAttemptIsReplacedNotForked(t *testing.T) {
	for _, unconfirmed := range []int{1, 2} {
		rs, local := lostConfirms(t, unconfirmed)
		if len(rs) != 4+unconfirmed {
			t.Fatalf("the stream holds %d records, want %d", len(rs), 4+unconfirmed)
		}
		chains, problems := Verify(rs, nil)
		if len(problems) != 0 || len(chains) != 1 {
			t.Fatalf("%d unconfirmed: chains %v, problems %v, want one chain and none", unconfirmed, chains, problems)
		}
		var want []int64
		for i := range unconfirmed {
			want = append(want, int64(1+i))
		}
		if c := chains[0]; c.First != 1 || c.Last != 4 || !slices.Equal(c.Replaced, want) {
			t.Fatalf("chain %+v, want entries 1-4 with offsets %v replaced", c, want)
		}
		standing := Standing(rs, chains, problems)
		if len(standing) != 4 {
			t.Fatalf("%d records stand, want 4", len(standing))
		}
		for i, r := range standing {
			if r.Entry.Hash != local[i].Hash {
				t.Fatalf("standing record %d is %s, want the journal's entry %d", i, r.Entry.Reason, local[i].Seq)
			}
		}
		if p, _ := CrossCheck(local, "alice@a:/j", rs); len(p) != 0 {
			t.Fatalf("cross-check: %v, want nothing", p)
		}
	}

	// The writer rewrites entry 2 after the stream confirmed it and 3
	// chained to it: naming the confirmed 2 as an attempt does not help.
	rs, local := lostConfirms(t, 0)
	rewritten := local[1]
	rewritten.Reason = "not what was done"
	rewritten.Supersedes = []string{local[1].Hash}
	rewritten.Hash = journal.HashOf(rewritten)
	rs = onStream(append(rs, Record{Writer: "alice@a:/j", Entry: rewritten})...)
	chains, problems := Verify(rs, nil)
	if len(problems) != 1 || !strings.Contains(problems[0].String(), "offset 4, writer alice@a:/j, entry 2: a second, different entry 2") {
		t.Fatalf("problems %v, want the rewritten entry 2 named as a fork", problems)
	}
	if len(chains[0].Replaced) != 0 {
		t.Fatalf("replaced %v, want nothing", chains[0].Replaced)
	}
	// Nor the last entry's replacement naming one that is not its own.
	rs, _ = lostConfirms(t, 0)
	other := rs[3].Entry
	other.Reason = "another"
	other.Supersedes = []string{rs[2].Entry.Hash}
	other.Hash = journal.HashOf(other)
	chains, problems = Verify(onStream(append(rs, Record{Writer: "alice@a:/j", Entry: other})...), nil)
	if len(problems) != 1 || len(chains[0].Replaced) != 0 {
		t.Fatalf("problems %v, replaced %v: want the fork named", problems, chains[0].Replaced)
	}
}

// offline is a stream that holds what it confirms, and confirms nothing
// while down.
type offline struct {
	w    string
	down bool
	held []Record
}

func (s *offline) Mirror(e journal.Entry) error {
	if s.down {
		return journal.ErrNotSent
	}
	s.held = append(s.held, Record{Writer: s.w, Entry: e})
	return nil
}

// Sessions' starts and ends written while the trail was offline are the
// journal's unsent tail, not a problem; once the trail is back they are on
// it, in order, before the next entry.
func TestCrossCheckTellsUnsentSessionsFromMissingEntries(t *testing.T) {
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	s := &offline{w: "serve@a:/j"}
	j.SetMirror(s)
	add := func(a triage.Action) error {
		_, err := j.Append(journal.Entry{Action: a, Actor: "bob", Queue: "q", Reason: string(a)})
		return err
	}
	for _, a := range []triage.Action{triage.ActionSessionStart, triage.ActionTag} {
		if err := add(a); err != nil {
			t.Fatal(err)
		}
	}
	s.down = true
	for _, a := range []triage.Action{triage.ActionSessionStart, triage.ActionSessionEnd} {
		if err := add(a); err != nil {
			t.Fatalf("%s with the trail offline: %v", a, err)
		}
	}
	local, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	problems, unsent := CrossCheck(local, s.w, onStream(s.held...))
	if len(problems) != 0 || !slices.Equal(unsent, []uint64{3, 4}) {
		t.Fatalf("problems %v, unsent %v; want none and 3-4", problems, unsent)
	}
	// A tag is not a session's: missing from the stream, it is a problem.
	problems, unsent = CrossCheck(local[:2], s.w, onStream(s.held[:1]...))
	if len(problems) != 1 || !strings.Contains(problems[0].String(), "entry 2: in the journal but never confirmed") || len(unsent) != 0 {
		t.Fatalf("problems %v, unsent %v; want entry 2 named", problems, unsent)
	}

	s.down = false
	if err := add(triage.ActionTag); err != nil {
		t.Fatal(err)
	}
	if local, err = j.Entries(); err != nil {
		t.Fatal(err)
	}
	rs := onStream(s.held...)
	if chains, problems := Verify(rs, nil); len(problems) != 0 || chains[0].Last != 5 {
		t.Fatalf("the stream once back: %v, %+v", problems, chains[0])
	}
	if problems, unsent := CrossCheck(local, s.w, rs); len(problems) != 0 || len(unsent) != 0 {
		t.Fatalf("problems %v, unsent %v once back", problems, unsent)
	}
}
