package views

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dlqt/dlqt/internal/triage"
)

// A gzip body is shown decoded, and the payload's title says so with both
// sizes; a corrupt one says why it shows the raw bytes.
func TestMessagePageSaysHowTheBodyWasDecoded(t *testing.T) {
	body := `{"event_type":"order.placed","failure":{"reason_code":"ADDRESS_INVALID"},"pad":"` + strings.Repeat("x y ", 500) + `"}`
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(body))
	w.Close()
	for _, tt := range []struct {
		name string
		body []byte
		want []string
	}{
		{"gzip", gz.Bytes(), []string{"payload (gzip, " + Count(gz.Len()) + " → " + Count(len(body)) + " bytes, application/json)", `"reason_code": "ADDRESS_INVALID"`}},
		{"corrupt", gz.Bytes()[:40], []string{"payload (gzip, 40 bytes, not decoded: corrupt: unexpected EOF; raw bytes shown", "binary, shown as hex", "1f 8b 08"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := triage.Message{Queue: "orders.dlq", Body: tt.body, Properties: triage.Properties{ContentType: "application/json", ContentEncoding: "gzip"}}
			tr := triage.Analyze(triage.Batch{Messages: []triage.Message{m}}, triage.Topology{}, nil)[0]
			v := NewMessage(testContext())
			v.SetSize(200, 400)
			v.SetMessage(tr, triage.DeliveryCost{}, nil, nil)
			screen := ansi.Strip(v.View())
			for _, want := range tt.want {
				if !strings.Contains(screen, want) {
					t.Errorf("no %q on the page:\n%s", want, screen)
				}
			}
		})
	}
}
