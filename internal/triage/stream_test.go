package triage

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// A streamed inspection gives every message the identity, reason and group
// the whole-batch Analyze gives it, in queue order, and the same groups;
// identical messages get their occurrence suffixes in the same order.
func TestInspectEachAgreesWithAnalyze(t *testing.T) {
	r := benchReader(2000)
	for i := 1500; i < 1510; i++ { // copies: ids get #2
		r.msgs[i] = r.msgs[i-1500]
		r.msgs[i].Position = i
	}
	want := Analyze(Batch{Messages: r.msgs}, r.top, nil)
	wantGroups := GroupMessages(want)
	for _, payloads := range []bool{false, true} {
		var got []Triaged
		s, err := InspectEach(context.Background(), r, "bench.dlq", BrowseOptions{}, StreamOptions{
			Payloads: payloads,
			Each:     func(t *Triaged) (bool, error) { got = append(got, *t); return true, nil },
		})
		if err != nil || len(got) != len(want) || s.Batch.Read != len(want) || s.Matched != len(want) {
			t.Fatalf("payloads %v: read %d (%d matched, batch %d) of %d: %v", payloads, len(got), s.Matched, s.Batch.Read, len(want), err)
		}
		for i := range want {
			w := want[i]
			if !payloads {
				w.Payload, w.Binary, w.Redactions, w.Timeline = "", false, 0, nil
			}
			if !reflect.DeepEqual(got[i], w) {
				t.Fatalf("payloads %v: message %d = %s/%s/%s, want %s/%s/%s", payloads, i, got[i].ID, got[i].Reason, got[i].ReasonCode, w.ID, w.Reason, w.ReasonCode)
			}
		}
		for i := range wantGroups {
			wantGroups[i].Members = nil
		}
		if !reflect.DeepEqual(s.Groups, wantGroups) {
			t.Fatalf("payloads %v: groups %+v, want %+v", payloads, s.Groups, wantGroups)
		}
	}
}

// Only what each counts is grouped, and an error of each stops the read
// and is returned.
func TestInspectEachFiltersAndStops(t *testing.T) {
	r := benchReader(1000)
	s, err := InspectEach(context.Background(), r, "bench.dlq", BrowseOptions{}, StreamOptions{
		Each: func(t *Triaged) (bool, error) { return t.ReasonCode == "TIMEOUT", nil },
	})
	if err != nil || s.Matched != 200 || len(s.Groups) != 1 || s.Groups[0].Count != 200 {
		t.Fatalf("matched %d, groups %+v, %v", s.Matched, s.Groups, err)
	}
	stop := errors.New("enough")
	n := 0
	_, err = InspectEach(context.Background(), r, "bench.dlq", BrowseOptions{}, StreamOptions{
		Each: func(*Triaged) (bool, error) {
			if n++; n == 300 {
				return false, stop
			}
			return true, nil
		},
	})
	if !errors.Is(err, stop) || n != 300 {
		t.Fatalf("each called %d times, err %v", n, err)
	}
}
