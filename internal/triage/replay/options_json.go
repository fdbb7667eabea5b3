package replay

import (
	"encoding/json"
	"fmt"
	"time"
)

// MarshalJSON writes the durations as Go duration strings ("10s"): a plan
// in the journal or in `replay --json` is read by people and scripts, for
// whom 10000000000 is no duration.
func (o Options) MarshalJSON() ([]byte, error) {
	type fields Options // the fields without this method
	return json.Marshal(struct {
		fields
		Observe        string `json:"observe"`
		ConfirmTimeout string `json:"confirm_timeout"`
		Baseline       string `json:"baseline,omitempty"`
	}{fields(o), o.Observe.String(), o.ConfirmTimeout.String(), durationOrEmpty(o.Baseline)})
}

// UnmarshalJSON reads the durations as strings, or as the nanoseconds the
// journal held before, so an old replay can still be resumed.
func (o *Options) UnmarshalJSON(data []byte) error {
	type fields Options
	var in struct {
		fields
		Observe        jsonDuration `json:"observe"`
		ConfirmTimeout jsonDuration `json:"confirm_timeout"`
		Baseline       jsonDuration `json:"baseline"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*o = Options(in.fields)
	o.Observe, o.ConfirmTimeout = time.Duration(in.Observe), time.Duration(in.ConfirmTimeout)
	o.Baseline = time.Duration(in.Baseline)
	return nil
}

// durationOrEmpty is d as a string, or "" (omitted) for none.
func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// jsonDuration is a duration written "10s" or, as before, in nanoseconds.
type jsonDuration time.Duration

func (d *jsonDuration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = jsonDuration(v)
		return nil
	}
	var ns int64
	if err := json.Unmarshal(data, &ns); err != nil {
		return fmt.Errorf("duration %s: want a string such as \"10s\" or nanoseconds", data)
	}
	*d = jsonDuration(ns)
	return nil
}
