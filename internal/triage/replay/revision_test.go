package replay

import (
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

func TestRevisionReplacesTheBodyAndSaysSo(t *testing.T) {
	m := triage.Message{Body: []byte(`{"a":1}`), Properties: triage.Properties{MessageID: "m1"}, Headers: triage.Headers{"tenant": "acme"}}
	var none *Revision
	if got := none.apply(m); string(got.Body) != `{"a":1}` || len(got.Headers) != 1 {
		t.Errorf("no revision changed the copy: %+v", got)
	}
	rev := &Revision{ID: "rev-1", Body: []byte(`{"a":2}`), OriginalSHA256: "abc"}
	got := rev.apply(m)
	if string(got.Body) != `{"a":2}` || got.Properties.MessageID != "m1" || got.Headers[HeaderRevision] != "rev-1" ||
		got.Headers[HeaderOriginalSHA256] != "abc" || got.Headers["tenant"] != "acme" {
		t.Errorf("copy %+v", got)
	}
	p := Plan{Items: []Item{{ID: "m1"}, {ID: "m2"}}}
	p.UseRevisions(map[string]Revision{"m1": *rev})
	if p.Items[0].Revision == nil || p.Items[0].Revision.ID != "rev-1" || p.Items[1].Revision != nil {
		t.Errorf("items %+v", p.Items)
	}
}
