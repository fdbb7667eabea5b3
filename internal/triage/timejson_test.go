package triage

import (
	"encoding/json"
	"testing"
	"time"
)

// Every instant an AMQP timestamp can carry, in RFC 3339's range or not,
// with or without a fraction, before 1970 or after, reads back equal.
func TestTimeJSONReadsBackEveryInstant(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2026, 11, 29, 8, 0, 0, 123, time.UTC),
		time.Unix(253402300800, 0), time.Unix(253402300800, 5e8),
		time.Unix(-(1 << 62), 0), time.Unix(-(1<<62)-1, 5e8), time.Unix(-1, 5e8), time.Unix(-1, 1),
		time.Unix(1<<62, 999999999),
	} {
		data := AppendTimeJSON(nil, at)
		got, err := ParseTimeJSON(data)
		if err != nil || !got.Equal(at) {
			t.Errorf("%v written as %s read back as %v, %v", at, data, got, err)
		}
	}
	if got := string(AppendTimeJSON(nil, time.Unix(-(1<<62)-1, 5e8))); got != "-4611686018427387904.5" {
		t.Errorf("-(2^62 + 0.5) s written as %s", got)
	}
}

// In range, a time is written byte for byte as encoding/json writes a
// time.Time, its zone kept: JSON a journal hashed reads the same.
func TestTimeJSONInRangeIsEncodingJSONs(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("", 2*3600))
	want, _ := at.MarshalJSON()
	if got := AppendTimeJSON(nil, at); string(got) != string(want) {
		t.Errorf("AppendTimeJSON = %s, encoding/json %s", got, want)
	}
	h := Headers{"at": at, "n": Headers{"at": at}, "l": []any{at}}
	got, err := json.Marshal(h)
	if err != nil || string(got) != `{"at":`+string(want)+`,"l":[`+string(want)+`],"n":{"at":`+string(want)+`}}` {
		t.Errorf("Headers = %s, %v", got, err)
	}
}

// A struct whose time is in range is written byte for byte as before (its
// fields in their order): the JSON of a journal entry or a plan reads the
// same as what was hashed.
func TestStructsInRangeAreWrittenAsBefore(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type plainProps Properties
	type plainDeath Death
	for _, c := range []struct{ v, plain any }{
		{Properties{MessageID: "a", Timestamp: at, Priority: 1}, plainProps(Properties{MessageID: "a", Timestamp: at, Priority: 1})},
		{Death{Queue: "q", Count: 2, Time: at, Exchange: "x"}, plainDeath(Death{Queue: "q", Count: 2, Time: at, Exchange: "x"})},
	} {
		got, err := json.Marshal(c.v)
		want, _ := json.Marshal(c.plain)
		if err != nil || string(got) != string(want) {
			t.Errorf("%T = %s, %v; want %s", c.v, got, err, want)
		}
	}
}
