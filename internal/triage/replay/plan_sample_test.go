package replay

import (
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// A plan lives as long as its run, so what its dry-run sample keeps of a
// message stays in memory through the hold and the publish: the sample
// kept the selected messages whole, a large body beside the copy the hold
// reads to publish (a replay of one 32 MiB message peaked at 193 MB of
// RSS, 152 MB without it). It keeps no body and the start of the payload.
func TestPlanSampleKeepsNoBody(t *testing.T) {
	big := parkedMsg("big", nil, `{"message_id":"big","pad":"`+strings.Repeat("p", 1<<20)+`"}`)
	in := replayInspection(big)
	if len(in.Messages[0].Payload) <= samplePayload {
		t.Fatalf("the inspection's payload is %d bytes: too small to show the cut", len(in.Messages[0].Payload))
	}
	p, err := NewPlan(in, triage.Selection{IDs: []string{"big"}}, Options{To: &triage.Route{Exchange: "ledger", RoutingKey: "entry.posted"}, Allow: []string{"ledger:*"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 {
		t.Fatalf("sample of %d messages, want 1", len(p.Sample))
	}
	s := p.Sample[0]
	if s.Message.Body != nil || len(s.Payload) > samplePayload+len("…") || !strings.HasPrefix(s.Payload, in.Messages[0].Payload[:100]) {
		t.Errorf("the sample keeps a body of %d bytes and a payload of %d", len(s.Message.Body), len(s.Payload))
	}
	if len(in.Messages[0].Message.Body) == 0 {
		t.Error("the plan took the inspection's body away")
	}
}
