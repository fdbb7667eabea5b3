package filter

import (
	"slices"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage"
)

// Without filters.tenant_path, tenant= finds the tenant under the common
// keys, in the envelope, its data object or the headers, and says which.
func TestTenantIsDetectedUnderTheCommonKeysAndSaysWhich(t *testing.T) {
	msg := func(id, body string, h triage.Headers) triage.Triaged {
		return triage.Triaged{ID: id, Message: triage.Message{Body: []byte(body), Headers: h, Properties: triage.Properties{ContentType: "application/json"}}}
	}
	ts := []triage.Triaged{
		msg("env", `{"tenant_id":"acme","data":{"x":1}}`, nil),
		msg("data", `{"event_type":"e","data":{"customerId":"no","customer_id":"acme"}}`, nil),
		msg("camel", `{"tenantId":"acme"}`, nil),
		msg("header", `{"event_type":"e"}`, triage.Headers{"org_id": "acme"}),
		msg("other", `{"tenant":"globex"}`, nil),
		msg("none", `{"event_type":"e"}`, nil),
	}
	f, err := ParseWhere([]string{"tenant=acme"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range f.Apply(ts) {
		got = append(got, m.ID)
	}
	if want := []string{"env", "data", "camel", "header"}; !slices.Equal(got, want) {
		t.Errorf("tenant=acme matched %v, want %v", got, want)
	}
	note := f.TenantNote()
	for _, want := range []string{"envelope tenant_id (1 message(s))", "payload data.customer_id (1", "envelope tenantId", "header org_id (1", "envelope tenant (1"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}

	// A configured path is used alone, and there is no note.
	f, err = ParseWhere([]string{"tenant=acme"}, Options{TenantPath: "tenant_id"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Apply(ts); len(got) != 1 || got[0].ID != "env" || f.TenantNote() != "" {
		t.Errorf("with a tenant path: %d matched, note %q", len(got), f.TenantNote())
	}
}
