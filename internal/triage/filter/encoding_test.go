package filter

import (
	"bytes"
	"compress/gzip"
	"slices"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// text~, tenant= and the envelope's fields see inside a gzip body, as the
// page shows it; a plain body that only looks alike is not confused with it.
func TestFilterSeesInsideGzipBodies(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"event_type":"order.placed","tenant_id":"acme","failure":{"reason_code":"ADDRESS_INVALID"},"data":{"note":"cust-4711 moved"}}`))
	w.Close()
	ms := []triage.Message{
		{Queue: "q", Body: gz.Bytes(), Properties: triage.Properties{ContentType: "application/json", ContentEncoding: "gzip"}},
		{Queue: "q", Body: []byte(`{"event_type":"order.placed","tenant_id":"globex"}`), Properties: triage.Properties{ContentType: "application/json"}},
	}
	ts := triage.Analyze(triage.Batch{Messages: ms}, triage.Topology{}, nil)
	for _, where := range []string{"text~cust-4711", "tenant=acme", "reason_code=ADDRESS_INVALID"} {
		f, err := ParseWhere([]string{where}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, m := range f.Apply(ts) {
			got = append(got, m.Message.Position)
		}
		if len(got) != 1 || !slices.Equal(got, []int{0}) || f.Apply(ts)[0].Message.Properties.ContentEncoding != "gzip" {
			t.Errorf("%s matched %v messages, want the gzip one alone", where, got)
		}
	}
}
