package journal

import (
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
