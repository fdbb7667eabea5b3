package journal

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC)

// filled appends entries whose details hold what JSON tends to mangle:
// HTML characters, unicode, big and fractional numbers, nesting.
func filled(t *testing.T) *Journal {
	t.Helper()
	j := open(t)
	entries := []Entry{
		{Time: t0, Actor: "ana@bastion", Host: "bastion", Action: triage.ActionTag, Vhost: "/", Queue: "orders.dlq",
			MessageIDs: []string{"m-1", "m;2"}, Reason: "needs-fix"},
		{Time: t0.Add(time.Minute), Actor: "ana@bastion", Host: "bastion", Action: triage.ActionDiscard, Vhost: "prod", Queue: "pay.parking",
			MessageIDs: []string{"sha256:00ff"}, Reason: "customer <fixed> & retried, \"ok\" — ✓",
			Details: map[string]any{"step": "outcome", "held": 10000, "ratio": 0.25, "big": int64(1) << 52, "missing": []string{"x"}, "nested": map[string]any{"a": []any{1, "b", nil, true}}}},
		{Time: t0.Add(2 * time.Minute), Actor: "bo", Host: "h2", Action: "note", Reason: "line\nbreak"},
		{Time: t0.Add(3 * time.Minute), Actor: "bo", Host: "h2", Action: triage.ActionUntag, Queue: "orders.dlq", MessageIDs: []string{"m-1"}, Reason: "needs-fix"},
	}
	for _, e := range entries {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

func TestExportJSONLReadsBackAndVerifies(t *testing.T) {
	j := filled(t)
	var buf bytes.Buffer
	n, err := j.Export(&buf, FormatJSONL, time.Time{})
	if err != nil || n != 4 {
		t.Fatalf("export: %d, %v", n, err)
	}
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 4 {
		t.Fatalf("%d lines, want one per entry:\n%s", len(lines), buf.String())
	}
	back, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(back); err != nil {
		t.Fatalf("an untouched export does not verify: %v", err)
	}
	stored, _ := j.Entries()
	for i := range stored {
		if back[i].Hash != stored[i].Hash || back[i].Seq != stored[i].Seq || !back[i].Time.Equal(stored[i].Time) {
			t.Errorf("entry %d read back as %+v, stored %+v", i+1, back[i], stored[i])
		}
	}
	if err := VerifySegment(back); err != nil {
		t.Fatalf("VerifySegment on a whole export: %v", err)
	}
}

// Changing any one field of one exported line breaks the chain at that entry.
func TestVerifyNamesTheEntryChangedInAnExport(t *testing.T) {
	j := filled(t)
	var buf bytes.Buffer
	if _, err := j.Export(&buf, FormatJSONL, time.Time{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	edits := map[string]func(map[string]any){
		"reason":      func(m map[string]any) { m["reason"] = "nothing to see" },
		"actor":       func(m map[string]any) { m["actor"] = "mallory" },
		"time":        func(m map[string]any) { m["time"] = "2026-11-30T09:01:00.5Z" },
		"message_ids": func(m map[string]any) { m["message_ids"] = []string{"sha256:00ff", "extra"} },
		"details":     func(m map[string]any) { m["details"].(map[string]any)["held"] = 9999 },
		"queue":       func(m map[string]any) { m["queue"] = "other" },
	}
	for field, edit := range edits {
		t.Run(field, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			changed, _ := json.Marshal(m)
			tampered := slices.Clone(lines)
			tampered[1] = string(changed)
			es, err := ReadJSONL(strings.NewReader(strings.Join(tampered, "\n")))
			if err != nil {
				t.Fatal(err)
			}
			var ce *ChainError
			if err := VerifySegment(es); !errors.As(err, &ce) || ce.Seq != 2 {
				t.Fatalf("verify = %v, want a break at entry 2", err)
			}
		})
	}
	t.Run("removed line", func(t *testing.T) {
		es, _ := ReadJSONL(strings.NewReader(strings.Join(slices.Delete(slices.Clone(lines), 1, 2), "\n")))
		var ce *ChainError
		if err := VerifySegment(es); !errors.As(err, &ce) || ce.Seq != 3 {
			t.Fatalf("verify = %v, want a break at entry 3", err)
		}
	})
}

func TestExportSinceIsASegmentThatVerifies(t *testing.T) {
	j := filled(t)
	var buf bytes.Buffer
	n, err := j.Export(&buf, FormatJSONL, t0.Add(2*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("export since: %d, %v; want the last 2 entries", n, err)
	}
	es, err := ReadJSONL(&buf)
	if err != nil || len(es) != 2 || es[0].Seq != 3 || es[1].Seq != 4 {
		t.Fatalf("read %+v, %v", es, err)
	}
	if err := VerifySegment(es); err != nil {
		t.Fatalf("segment: %v", err)
	}
	es[1].Reason = "forged"
	var ce *ChainError
	if err := VerifySegment(es); !errors.As(err, &ce) || ce.Seq != 4 {
		t.Fatalf("forged segment: %v, want a break at 4", err)
	}
	if err := VerifySegment(nil); err == nil {
		t.Error("an empty export verified")
	}
}

func TestExportCSVShape(t *testing.T) {
	j := filled(t)
	var buf bytes.Buffer
	n, err := j.Export(&buf, FormatCSV, time.Time{})
	if err != nil || n != 4 {
		t.Fatalf("export: %d, %v", n, err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("rows = %d, header %v", len(rows), rows[0])
	}
	stored, _ := j.Entries()
	first, second := rows[1], rows[2]
	if first[0] != "1" || first[1] != "2026-11-30T09:00:00.123456789Z" || first[7] != "m-1;m;2" || first[9] != "" || first[11] != stored[0].Hash {
		t.Errorf("row 1 = %q", first)
	}
	var details map[string]any
	if err := json.Unmarshal([]byte(second[9]), &details); err != nil || details["step"] != "outcome" || details["held"] != float64(10000) {
		t.Errorf("row 2 details = %q (%v)", second[9], err)
	}
	if second[8] != stored[1].Reason || second[10] != stored[0].Hash {
		t.Errorf("row 2 = %q", second)
	}
	if rows[3][8] != "line\nbreak" {
		t.Errorf("a reason with a newline came back as %q", rows[3][8])
	}
	if _, err := j.Export(&buf, "xml", time.Time{}); err == nil {
		t.Error("an unknown format was accepted")
	}
}

func TestReadJSONLNamesTheBadLine(t *testing.T) {
	_, err := ReadJSONL(strings.NewReader(`{"seq":1}` + "\n\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("err = %v, want it to name line 3", err)
	}
}

func TestRecorderWritesEntriesAndExportLeavesOne(t *testing.T) {
	j := open(t)
	var rec triage.Recorder = NewRecorder(j, "ana@bastion", "bastion")
	err := rec.Record(triage.Record{Action: triage.ActionDiscard, Vhost: "v", Queue: "q", MessageIDs: []string{"a"}, Reason: "why",
		Details: map[string]any{"step": "decision", "count": 1}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	since := time.Now().Add(-time.Hour)
	n, err := NewRecorder(j, "bo", "h2").Export(&buf, "", since)
	if err != nil || n != 1 {
		t.Fatalf("export: %d, %v", n, err)
	}
	es, _ := j.Entries()
	if len(es) != 2 {
		t.Fatalf("entries = %+v", es)
	}
	d := es[0]
	if d.Actor != "ana@bastion" || d.Host != "bastion" || d.Action != triage.ActionDiscard || d.Vhost != "v" || d.Queue != "q" ||
		!slices.Equal(d.MessageIDs, []string{"a"}) || d.Reason != "why" || d.Details["count"] != float64(1) {
		t.Errorf("discard entry = %+v", d)
	}
	x := es[1]
	if x.Action != triage.ActionExport || x.Actor != "bo" || x.Details["format"] != FormatJSONL || x.Details["count"] != float64(1) ||
		x.Details["since"] != since.UTC().Format(time.RFC3339Nano) {
		t.Errorf("export entry = %+v", x)
	}
	if !strings.Contains(buf.String(), `"action":"discard"`) || strings.Contains(buf.String(), `"action":"export"`) {
		t.Errorf("the export holds %q, want the discard and not itself", buf.String())
	}
	if err := j.Verify(); err != nil {
		t.Fatal(err)
	}
}
