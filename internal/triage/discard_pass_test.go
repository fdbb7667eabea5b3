package triage

import (
	"context"
	"slices"
	"testing"
)

// codeIs is a Where that matches one reason code.
type codeIs string

func (c codeIs) Match(t Triaged) bool { return t.ReasonCode == string(c) }
func (c codeIs) Empty() bool          { return false }
func (c codeIs) Exprs() []string      { return []string{"reason_code = " + string(c)} }
func (c codeIs) String() string       { return "reason_code = " + string(c) }

// passBatch has duplicates by message id, identical messages with no id
// (content hashed), and a message whose id looks like an occurrence
// suffix of another ("a#2"), which makes the suffixes of a skip it.
func passBatch() []Message {
	noID := Message{Properties: Properties{ContentType: "text/plain"}, Body: []byte("same body")}
	return []Message{
		parked("a", "x"), parked("b", "y"), parked("a", "y"), parked("a#2", "x"),
		noID, parked("c", "x"), noID, parked("a", "x"), parked("d", "z"),
	}
}

// The sweep pass, handed the messages one at a time, picks exactly the
// positions and gives exactly the identities that Analyze over the whole
// batch and Selection.Matches give, for ids (suffixed ones included),
// groups, a filter, and ids narrowed by a filter; and keeps whole only the
// messages that may be selected by id (a group or filter keeps positions).
func TestSweepPassPicksWhatTheWholeBatchPicks(t *testing.T) {
	top := discardTopology()
	batch := passBatch()
	for i := range batch {
		batch[i].Queue, batch[i].Position = "orders.parking", i
	}
	ref := Analyze(Batch{Vhost: "v", Queue: "orders.parking", Messages: batch}, top, nil)
	refIDs := make([]string, len(ref))
	for i, r := range ref {
		refIDs[i] = r.ID
	}
	contentID := refIDs[4]
	for _, tc := range []struct {
		name     string
		sel      Selection
		maxKept  int
		wantPick []int
	}{
		{"ids", Selection{IDs: []string{"a#3", "b", "nope"}}, 4, []int{2, 1}},
		{"the literal a#2", Selection{IDs: []string{"a#2"}}, 4, []int{3}},
		{"the second identical body", Selection{IDs: []string{contentID + "#2"}}, 2, []int{6}},
		{"group", Selection{Group: group("published/x")}, 0, []int{0, 3, 5, 7}},
		{"filter", Selection{Where: codeIs("y")}, 0, []int{1, 2}},
		{"ids and filter", Selection{IDs: []string{"a", "a#3", "a#4"}, Where: codeIs("x")}, 3, []int{0, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []int
			for i, r := range ref {
				if tc.sel.Matches(r) {
					want = append(want, i)
				}
			}
			slices.Sort(tc.wantPick)
			if !slices.Equal(want, tc.wantPick) {
				t.Fatalf("the reference picks %v (ids %v), the test expects %v", want, refIDs, tc.wantPick)
			}
			p := newSweepPass(top, nil, tc.sel)
			for _, m := range batch {
				if err := p.take(m); err != nil {
					t.Fatal(err)
				}
			}
			ids, picks := p.picks()
			if !slices.Equal(ids, refIDs) || !slices.Equal(picks, want) {
				t.Errorf("pass: ids %v picks %v; whole batch: ids %v picks %v", ids, picks, refIDs, want)
			}
			if len(p.cands) > tc.maxKept {
				t.Errorf("kept %d whole messages, want at most %d", len(p.cands), tc.maxKept)
			}
		})
	}
}

// A discard through a sweeper that hands each message on (the broker's)
// takes, journals and leaves exactly what one through a sweeper that keeps
// them does.
func TestDiscardThroughAStreamingSweeperTakesTheSame(t *testing.T) {
	for _, sel := range []Selection{
		{IDs: []string{"a#3", "b", "gone"}},
		{Group: group("published/x")},
		{Where: codeIs("y")},
	} {
		var results []DiscardResult
		var left [][]string
		var journals [][]Record
		for _, stream := range []bool{false, true} {
			q := &queueSweeper{msgs: passBatch(), stream: stream}
			rec := &memRecorder{}
			res, err := Discard(context.Background(), q, discardTopology(), rec, DiscardRequest{
				Vhost: "v", Queue: "orders.parking", Reason: "test", Selection: sel,
			})
			if err != nil {
				t.Fatal(err)
			}
			if stream && q.opts.Each == nil {
				t.Fatal("Discard handed the sweeper no Each")
			}
			results, left, journals = append(results, res), append(left, q.ids()), append(journals, rec.records)
		}
		if !slices.Equal(results[0].Discarded, results[1].Discarded) || !slices.Equal(results[0].Missing, results[1].Missing) ||
			results[0].Held != results[1].Held || len(results[0].Discarded) == 0 {
			t.Errorf("%s: kept %+v, streamed %+v", sel, results[0], results[1])
		}
		if !slices.Equal(left[0], left[1]) {
			t.Errorf("%s: left %v kept, %v streamed", sel, left[0], left[1])
		}
		if len(journals[0]) != len(journals[1]) {
			t.Errorf("%s: journalled %d records kept, %d streamed", sel, len(journals[0]), len(journals[1]))
		}
		for i := range min(len(journals[0]), len(journals[1])) {
			if !slices.Equal(journals[0][i].MessageIDs, journals[1][i].MessageIDs) {
				t.Errorf("%s: record %d names %v kept, %v streamed", sel, i, journals[0][i].MessageIDs, journals[1][i].MessageIDs)
			}
		}
	}
}
