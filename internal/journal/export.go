package journal

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Export formats.
const (
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
)

// csvHeader names the CSV columns, in the order of Entry's fields.
var csvHeader = []string{"seq", "time", "actor", "host", "action", "vhost", "queue", "message_ids", "reason", "details", "prev_hash", "hash"}

// Export writes the entries made at or after since (zero: all) to w, one
// per line: JSONL carries every hashed field exactly as stored, so
// ReadJSONL and VerifySegment can check it later; CSV is for people and
// spreadsheets (message ids joined with ';', details as JSON). It returns
// how many entries it wrote and leaves the journal unchanged.
func (j *Journal) Export(w io.Writer, format string, since time.Time) (int, error) {
	es, err := j.Entries()
	if err != nil {
		return 0, err
	}
	var sel []Entry
	for _, e := range es {
		if since.IsZero() || !e.Time.Before(since) {
			sel = append(sel, e)
		}
	}
	switch format {
	case FormatJSONL, "":
		return writeJSONL(w, sel)
	case FormatCSV:
		return writeCSV(w, sel)
	}
	return 0, fmt.Errorf("export format %q: want %s or %s", format, FormatJSONL, FormatCSV)
}

func writeJSONL(w io.Writer, es []Entry) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i, e := range es {
		if err := enc.Encode(e); err != nil {
			return i, fmt.Errorf("export entry %d: %w", e.Seq, err)
		}
	}
	return len(es), bw.Flush()
}

func writeCSV(w io.Writer, es []Entry) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return 0, err
	}
	for i, e := range es {
		details := ""
		if e.Details != nil {
			raw, err := json.Marshal(e.Details)
			if err != nil {
				return i, fmt.Errorf("export entry %d: %w", e.Seq, err)
			}
			details = string(raw)
		}
		row := []string{
			strconv.FormatUint(e.Seq, 10), e.Time.UTC().Format(time.RFC3339Nano), e.Actor, e.Host, string(e.Action),
			e.Vhost, e.Queue, strings.Join(e.MessageIDs, ";"), e.Reason, details, e.PrevHash, e.Hash,
		}
		if err := cw.Write(row); err != nil {
			return i, err
		}
	}
	cw.Flush()
	return len(es), cw.Error()
}

// ReadJSONL reads an export back. A line that is not an entry is an error
// naming the line, since a verify must not skip what it cannot read.
func ReadJSONL(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var e Entry
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return out, fmt.Errorf("line %d is not a journal entry: %w", line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("line %d: %w", line+1, err)
	}
	return out, nil
}

// VerifySegment checks a run of consecutive entries, such as an export made
// with --since: sequence numbers without gaps, each prev_hash the hash of
// the entry before it, each hash its content. The first entry's prev_hash
// can only be checked when the segment starts at entry 1.
func VerifySegment(entries []Entry) error {
	if len(entries) == 0 {
		return errors.New("the file holds no journal entries")
	}
	if first := entries[0]; first.Seq > 1 {
		return verifyFrom(entries, first.Seq, first.PrevHash)
	}
	return VerifyChain(entries)
}
