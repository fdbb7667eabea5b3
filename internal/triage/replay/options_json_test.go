package replay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A plan journaled with a baseline resumes with it: the duration is
// written as a string and read back; without one the key is left out, so
// plans of earlier builds read the same.
func TestOptionsKeepTheBaselineThroughTheJournal(t *testing.T) {
	in := Options{Rate: 10, Observe: 30 * time.Second, ConfirmTimeout: time.Minute, Baseline: 5 * time.Second}
	data, err := json.Marshal(in)
	if err != nil || !strings.Contains(string(data), `"baseline":"5s"`) {
		t.Fatalf("%s, %v", data, err)
	}
	var out Options
	if err := json.Unmarshal(data, &out); err != nil || out.Baseline != in.Baseline || out.Observe != in.Observe {
		t.Errorf("read back %+v, %v", out, err)
	}
	in.Baseline = 0
	if data, _ := json.Marshal(in); strings.Contains(string(data), "baseline") {
		t.Errorf("no baseline written as %s", data)
	}
}
