package journal

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// TestRecordsOfPassesOverWhatItDoesNotKeep: a reader that wants a few
// kinds of record (a replay looks for the approved edits of its queue)
// gets exactly those of Records, in order, and does not pay for decoding
// the rest. Before, every replay decoded every record: four earlier
// replays of 100,000 messages in the journal (81 MB) took its peak RSS
// from about 250 MiB to 468 MiB.
func TestRecordsOfPassesOverWhatItDoesNotKeep(t *testing.T) {
	j := open(t)
	plan := make([]any, 20000) // a replay plan's items, as journalled
	for i := range plan {
		plan[i] = map[string]any{"id": fmt.Sprintf("m-%06d", i), "route": "orders", "sha256": "0123456789abcdef0123456789abcdef"}
	}
	for _, e := range []Entry{
		{Action: triage.ActionReplayPlan, Queue: "q", Details: map[string]any{"replay_id": "rp-1", "items": plan}},
		{Action: triage.ActionEdit, Queue: "q", MessageIDs: []string{"m-000001"}, Details: map[string]any{"revision": map[string]any{"id": "rev-1"}}},
		{Action: triage.ActionReplayPlan, Queue: "q", Details: map[string]any{"replay_id": "rp-2", "items": plan}},
		{Action: triage.ActionProposal, Queue: "q", Details: map[string]any{"proposal_id": "pr-1"}},
		{Action: triage.ActionTag, Queue: "q", MessageIDs: []string{"m-000002"}, Reason: "poison"},
	} {
		e.Actor = "ana@bastion"
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(a triage.Action) bool { return a == triage.ActionEdit || a.IsProposal() }

	all, allocAll := allocated(t, func() ([]triage.Recorded, error) { return j.Records() })
	kept, allocKept := allocated(t, func() ([]triage.Recorded, error) { return j.RecordsOf(keep) })

	want := slices.DeleteFunc(slices.Clone(all), func(r triage.Recorded) bool { return !keep(r.Action) })
	if len(all) != 5 || len(want) != 2 {
		t.Fatalf("Records read %d records, %d of them edits or proposals; want 5 and 2", len(all), len(want))
	}
	if len(kept) != len(want) {
		t.Fatalf("RecordsOf kept %d records, want %d", len(kept), len(want))
	}
	for i := range want {
		if kept[i].Seq != want[i].Seq || kept[i].Action != want[i].Action || fmt.Sprint(kept[i].Details) != fmt.Sprint(want[i].Details) {
			t.Errorf("record %d: RecordsOf read %d %s %v, Records %d %s %v", i,
				kept[i].Seq, kept[i].Action, kept[i].Details, want[i].Seq, want[i].Action, want[i].Details)
		}
	}
	// The two plans are about 2 MB of JSON, decoded a map per item.
	if allocKept*20 > allocAll {
		t.Errorf("RecordsOf allocated %d bytes, Records %d: the plans it passes over were decoded", allocKept, allocAll)
	}
	t.Logf("allocated: Records %d bytes, RecordsOf %d", allocAll, allocKept)
}

// allocated runs read and says how many bytes of heap it allocated.
func allocated(t *testing.T, read func() ([]triage.Recorded, error)) ([]triage.Recorded, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rs, err := read()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	return rs, after.TotalAlloc - before.TotalAlloc
}

// TestSealStoresWhatItHashed: the stored bytes of a sealed entry are the
// entry as JSON, hash included, whatever its details hold: seal builds
// them from the hashed body rather than encoding the entry twice.
func TestSealStoresWhatItHashed(t *testing.T) {
	for _, e := range []Entry{
		{Seq: 1, Action: triage.ActionTag, Reason: "poison"},
		{Seq: 2, PrevHash: "ab", Action: triage.ActionReplayPlan, MessageIDs: []string{"m-1", "<m&2>"}, Version: "v1", Context: "prod",
			Details: map[string]any{"replay_id": "rp-1", "n": uint64(12345678901234567890), "f": 0.1, "s": "caf\u00e9 \xff", "nested": []any{map[string]any{"b": 1, "a": nil}}}},
		{Seq: 3, Action: triage.ActionDiscard, Supersedes: []string{"cd", "ef"}, Details: map[string]any{}},
	} {
		sealed, data, err := seal(e)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(sealed)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != string(want) {
			t.Errorf("entry %d stored as\n%s\nwant\n%s", e.Seq, data, want)
		}
		if err := verifyFrom([]Entry{sealed}, e.Seq, e.PrevHash); err != nil {
			t.Errorf("entry %d: %v", e.Seq, err)
		}
		var back Entry
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if err := verifyFrom([]Entry{back}, e.Seq, e.PrevHash); err != nil {
			t.Errorf("entry %d read back: %v", e.Seq, err)
		}
	}
}

// FuzzLightReadsAgreeWithTheWholeEntry: what an append reads of the entry
// before it (chainOf) and of the entry it indexes (indexedOf) is what the
// whole entry says, for any stored bytes the whole decode accepts.
func FuzzLightReadsAgreeWithTheWholeEntry(f *testing.F) {
	for _, s := range []string{
		`{"seq":7,"action":"replay-plan","vhost":"v","queue":"q","details":{"replay_id":"rp-1","plan":{"items":[{"id":"a"}]}},"hash":"h"}`,
		`{"seq":8,"action":"replay-start","details":{"replay_id":5},"hash":"h"}`,
		`{"seq":9,"action":"replay-start","details":{"Replay_ID":"rp-2","replay_id":null},"hash":"h"}`,
		`{"seq":10,"action":"replay-finish","details":{"replay_id":"a","replay_id":"b"},"hash":"h","Hash":"x"}`,
		`{"seq":11,"action":"tag","reason":"t","details":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		var whole Entry
		if json.Unmarshal(v, &whole) != nil {
			return
		}
		c, err := chainOf(v)
		if err != nil || c.Entries != whole.Seq || c.Hash != whole.Hash {
			t.Fatalf("chainOf read %d %q (%v), the entry is %d %q", c.Entries, c.Hash, err, whole.Seq, whole.Hash)
		}
		ix, err := indexedOf(v)
		if err != nil {
			t.Fatalf("indexedOf: %v", err)
		}
		if ix.Seq != whole.Seq || ix.Action != whole.Action || ix.Vhost != whole.Vhost || ix.Queue != whole.Queue || replayID(ix) != replayID(whole) {
			t.Fatalf("indexedOf read %d %s %q %q replay %q, the entry is %d %s %q %q replay %q",
				ix.Seq, ix.Action, ix.Vhost, ix.Queue, replayID(ix), whole.Seq, whole.Action, whole.Vhost, whole.Queue, replayID(whole))
		}
	})
}
