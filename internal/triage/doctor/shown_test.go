package doctor

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// A queue named with a webhook token in it is quoted by the findings about
// it; what reaches the doctor's screen and JSON masks it as a payload would.
func TestShownFindingsAreRedacted(t *testing.T) {
	top := seed001Topology()
	const token = "q8Zr_T3vLx9-Ka2WmB7nYc4pHd6sJf1uGe5RtX0o"
	q := "callback." + token
	top.Queues = append(top.Queues, triage.Queue{Name: q, Type: "classic", HasDeadLetterExchange: true, DeadLetterExchange: "nowhere.dlx"})
	fs := Shown(diagnose(top), redact.New())
	if len(fs) == 0 {
		t.Fatal("no findings")
	}
	found := false
	for _, f := range fs {
		all := f.Queue + f.Exchange + f.Detail + f.Fix
		if strings.Contains(all, token) {
			t.Errorf("the token is in a finding: %+v", f)
		}
		found = found || strings.Contains(all, "callback.[REDACTED:secret]")
	}
	if !found {
		t.Errorf("no finding names the queue masked: %+v", fs)
	}
}
