package cli

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// discard and replay read --id, --group and --where through one function:
// each bad command line is a usage error with the same words in both.
func TestSelectionChecksAreTheSameForDiscardAndReplay(t *testing.T) {
	const hint = " (--id ID ..., --group REASON[/CODE] or --where EXPR)"
	tests := []struct {
		name    string
		ids     []string
		group   string
		where   []string
		wantErr string
	}{
		{name: "nothing selected", wantErr: "no messages selected: name ids, a group or a filter" + hint},
		{name: "ids and a group", ids: []string{"m-1"}, group: "expired", wantErr: "select messages by id or by group, not both" + hint},
		{name: "ids and a filter", ids: []string{"m-1"}, where: []string{"tenant=acme"},
			wantErr: "--where narrows a group or the whole queue; --id already names the messages: use one or the other"},
		{name: "a bad group", group: "/code", wantErr: `group "/code": want REASON[/CODE], e.g. expired, rejected/address_invalid or maxlen/`},
		{name: "a bad filter", where: []string{"colour=red"}},
		{name: "ids", ids: []string{"m-1", "m-2"}},
		{name: "a group narrowed by a filter", group: "rejected/address_invalid", where: []string{"reason_code!=x"}},
		{name: "a filter alone", where: []string{"reason=expired"}},
	}
	a := &app{vhost: "/", limit: triage.DefaultBrowseLimit}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := a.selection(tc.ids, tc.group, tc.where)
			_, derr := a.discardRequest("park", tc.ids, tc.group, "duplicates", tc.where)
			if (err == nil) != (derr == nil) || (err != nil && err.Error() != derr.Error()) {
				t.Fatalf("replay says %v, discard says %v", err, derr)
			}
			valid := tc.wantErr == "" && tc.name != "a bad filter"
			if valid {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !slices.Equal(sel.IDs, tc.ids) || (tc.group != "" && sel.Group.String() != tc.group) || (len(tc.where) > 0) != (sel.Where != nil) {
					t.Errorf("selection %+v does not carry the flags", sel)
				}
				return
			}
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if tc.wantErr != "" && err.Error() != tc.wantErr {
				t.Errorf("err = %q\nwant  %q", err, tc.wantErr)
			}
		})
	}
}

func TestDiscardNeedsAReasonFirst(t *testing.T) {
	a := &app{}
	_, err := a.discardRequest("park", nil, "", "  ", nil)
	var ue usageError
	if !errors.As(err, &ue) || err.Error() != "--reason TEXT is required: the journal keeps why messages were discarded" {
		t.Errorf("err = %v, want the reason usage error before the selection's", err)
	}
}

func TestMissingIDsAreTheAskedOnesNotChosenEachOnce(t *testing.T) {
	chosen := []triage.Triaged{{ID: "a"}, {ID: "c"}}
	tests := []struct {
		ids, want []string
	}{
		{nil, nil},
		{[]string{"a", "c"}, nil},
		{[]string{"a", "b", "c", "d"}, []string{"b", "d"}},
		{[]string{"b", "b", "a", "b"}, []string{"b"}},
	}
	for _, tc := range tests {
		if got := missingIDs(tc.ids, chosen); !slices.Equal(got, tc.want) {
			t.Errorf("missingIDs(%v) = %v, want %v", tc.ids, got, tc.want)
		}
	}
}

func TestResumeNoticeCountsWhatIsLeftToPublish(t *testing.T) {
	c := map[replay.Outcome]int{
		replay.OutcomeConfirmed: 4, replay.OutcomeFailedAgain: 1, replay.OutcomeReturned: 2,
		replay.OutcomeUntouched: 3, // put back unpublished: published on resume
	}
	want := "resuming replay r-1 of park: 4 confirmed before the interruption (their sources are acked, not published again), 1 failed again, 2 returned, 13 to publish.\n" +
		"A message published but not yet confirmed when dlqt stopped is published again: it may be delivered twice.\n"
	if got := resumeNotice("r-1", "park", 20, c); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := resumeNotice("r-2", "park", 5, nil); !strings.Contains(got, ": 0 confirmed") || !strings.Contains(got, ", 5 to publish.") {
		t.Errorf("nothing journalled yet: %q", got)
	}
	c[replay.OutcomePublished] = 2 // sent, no answer journalled: to publish again
	if got := resumeNotice("r-3", "park", 20, c); !strings.Contains(got, ", 13 to publish.") || !strings.Contains(got, "2 of them were sent before dlqt stopped") {
		t.Errorf("sent before the interruption: %q", got)
	}
}
