package filter

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
)

// filterBatch is four parked messages that differ in every field a filter
// reads, so each expression below must pick a known subset.
func filterBatch(t *testing.T, red *redact.Redactor) []triage.Triaged {
	t.Helper()
	t0 := mustTime("2026-11-30T10:00:00Z")
	env := func(id, event, schema, code, version, tenant, extra string) []byte {
		return []byte(`{"message_id":"` + id + `","event_type":"` + event + `","schema_version":` + schema +
			`,"customer":{"tenant_id":"` + tenant + `","card":"4111 1111 1111 1111"` + extra + `},` +
			`"failure":{"reason_code":"` + code + `","consumer_version":"` + version + `"}}`)
	}
	msg := func(id, queue, reason string, at time.Time, body []byte, h triage.Headers) triage.Message {
		x := triage.Headers{"x-death": []any{xdeath(queue, reason, 1, at, "", queue)}, "x-first-death-queue": queue}
		for k, v := range h {
			x[k] = v
		}
		return triage.Message{Queue: "nghia-dia", Exchange: "dlx", RoutingKey: queue, Body: body,
			Properties: triage.Properties{MessageID: id, ContentType: "application/json"}, Headers: x}
	}
	batch := triage.Batch{Queue: "nghia-dia", Messages: []triage.Message{
		msg("m-1", "viec", "rejected", t0, env("m-1", "order.created", "2", "address_invalid", "1.4.0", "acme", ""),
			triage.Headers{"x-note": "Card DECLINED by issuer"}),
		msg("m-2", "viec2", "expired", t0.Add(-2*time.Hour), env("m-2", "order.created", "3", "", "1.5.0", "globex", ""), nil),
		msg("m-3", "viec", "rejected", t0.Add(-30*time.Minute), env("m-3", "customer.updated", `"4"`, "tax_profile_missing", "1.5.0", "acme", `,"client_secret":"declined-secret"`),
			triage.Headers{"authorization": "Bearer declinedtokendeclinedtoken"}),
		{Queue: "nghia-dia", Body: []byte("plain text, no envelope"), Properties: triage.Properties{MessageID: "m-4"}},
	}}
	return triage.Analyze(batch, parkingTopology(), red)
}

func ids(ts []triage.Triaged) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestEveryFilterFieldNarrowsTheMessages(t *testing.T) {
	now := mustTime("2026-11-30T10:15:00Z")
	opts := Options{TenantPath: "customer.tenant_id", Now: now}
	ts := filterBatch(t, redact.New())
	tests := []struct {
		exprs []string
		want  []string
	}{
		{[]string{"reason=rejected"}, []string{"m-1", "m-3"}},
		{[]string{"reason=expired,published"}, []string{"m-2", "m-4"}},
		{[]string{"reason!=rejected"}, []string{"m-2", "m-4"}},
		{[]string{"reason_code=address_invalid"}, []string{"m-1"}},
		{[]string{"reason_code="}, []string{"m-2", "m-4"}},
		{[]string{"reason_code!="}, []string{"m-1", "m-3"}},
		{[]string{"reason_code~TAX"}, []string{"m-3"}},
		{[]string{"event_type=order.created"}, []string{"m-1", "m-2"}},
		{[]string{"event_type!~order"}, []string{"m-3", "m-4"}},
		{[]string{"queue=viec"}, []string{"m-1", "m-3"}},
		{[]string{"queue=viec2"}, []string{"m-2"}},
		{[]string{"queue="}, []string{"m-4"}},
		{[]string{"died>2026-11-30T09:45:00Z"}, []string{"m-1"}},
		{[]string{"died>=2026-11-30T09:30:00Z", "died<2026-11-30T10:00:00Z"}, []string{"m-3"}},
		{[]string{"died<2026-11-30"}, nil},
		{[]string{"died<1h"}, []string{"m-1", "m-3"}},   // less than an hour before 10:15
		{[]string{"died>1h"}, []string{"m-2"}},          // more than an hour ago; m-4 has no time
		{[]string{"first_died<20m"}, []string{"m-1"}},   // first death within 20 minutes
		{[]string{"first_died>=1d"}, nil},               // nothing died a day ago
		{[]string{"schema_version=3"}, []string{"m-2"}}, // a JSON number
		{[]string{"schema_version=4"}, []string{"m-3"}}, // a JSON string
		{[]string{"schema_version>=3"}, []string{"m-2", "m-3"}},
		{[]string{"schema_version<3"}, []string{"m-1"}},
		{[]string{"consumer_version=1.5.0"}, []string{"m-2", "m-3"}},
		{[]string{"consumer_version!=1.5.0"}, []string{"m-1", "m-4"}},
		{[]string{"tenant=acme"}, []string{"m-1", "m-3"}},
		{[]string{"tenant=globex", "reason=expired"}, []string{"m-2"}},
		{[]string{"tenant="}, []string{"m-4"}},
		{[]string{"text~declined"}, []string{"m-1"}}, // a header, case-insensitive
		{[]string{"text~customer.updated"}, []string{"m-3"}},
		{[]string{"text~no envelope"}, []string{"m-4"}},
		{[]string{"text!~acme"}, []string{"m-2", "m-4"}},
		{[]string{"reason=rejected", "tenant=acme", "schema_version>2"}, []string{"m-3"}},
		{nil, []string{"m-1", "m-2", "m-3", "m-4"}},
	}
	for _, tc := range tests {
		f, err := ParseWhere(tc.exprs, opts)
		if err != nil {
			t.Fatalf("%v: %v", tc.exprs, err)
		}
		got := ids(f.Apply(ts))
		want := tc.want
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: got %v, want %v", tc.exprs, got, want)
		}
		for _, m := range ts {
			if f.Match(m) != slices.Contains(want, m.ID) {
				t.Errorf("%v: Match(%s) disagrees with Apply", tc.exprs, m.ID)
			}
		}
	}
}

// A search must never find what the screen masks: a secret key's value, a
// bearer token, a card number or a configured path.
func TestTextSearchNeverReadsWhatRedactionMasks(t *testing.T) {
	red := redact.New().WithPaths([]redact.PathRule{{Path: mustPath(t, "customer.tenant_id"), Mask: redact.MaskFull}})
	ts := filterBatch(t, red)
	for _, secret := range []string{"declined-secret", "declinedtokendeclinedtoken", "4111 1111 1111 1111", "4111"} {
		f, err := ParseWhere([]string{"text~" + secret}, Options{Redactor: red})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Apply(ts); len(got) != 0 {
			t.Errorf("text~%s found %v: the search read a masked value", secret, ids(got))
		}
	}
	// The tenant path is masked by a configured rule: tenant sees the mask too.
	f, err := ParseWhere([]string{"tenant~acme"}, Options{Redactor: red, TenantPath: "customer.tenant_id"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Apply(ts); len(got) != 0 {
		t.Errorf("tenant~acme found %v through a masked path", ids(got))
	}
	// The Triaged may have been rendered by the defaults (a discard's sweep);
	// the filter's own redactor still decides what a search sees.
	loose := filterBatch(t, redact.New())
	if got := f.Apply(loose); len(got) != 0 {
		t.Errorf("tenant~acme found %v in a payload rendered with fewer rules", ids(got))
	}
}

func TestFilterErrorsNameTheExpression(t *testing.T) {
	opts := Options{TenantPath: "customer.tenant_id"}
	tests := map[string]string{
		"colour=red":             `unknown field "colour" (fields: reason, reason_code`,
		"reason":                 "want FIELD OP VALUE",
		"=expired":               "want FIELD OP VALUE",
		"reason=expird":          `unknown reason "expird"`,
		"reason>expired":         "reason takes = != ~ !~, not >",
		"died=2026-11-30":        "died takes > < >= <=, not =",
		"died>yesterday":         `"yesterday" is neither a time`,
		"died<-1h":               "is neither a time",
		"schema_version>three":   `compares numbers, got "three"`,
		"text=foo":               "text takes ~ !~, not =",
		"text~":                  "needs text to look for",
		"event_type~   ":         "needs text to look for",
		"consumer_version>1.0.0": "consumer_version takes = != ~ !~",
	}
	for expr, want := range tests {
		_, err := ParseWhere([]string{"reason=expired", expr}, opts)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), expr) {
			t.Errorf("%s: error %v, want one naming %q and containing %q", expr, err, expr, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", expr, err)
		}
	}
	// Without a tenant path tenant= is no longer refused: it detects the
	// common keys (tenant_test.go), and its note still names the setting.
	if f, err := ParseWhere([]string{"tenant=acme"}, Options{}); err != nil || !strings.Contains(f.TenantNote(), "filters.tenant_path") {
		t.Errorf("tenant without a tenant path: %v, note %q", err, f.TenantNote())
	}
	if _, err := ParseWhere(nil, Options{TenantPath: "customer..id"}); err == nil || !strings.Contains(err.Error(), "customer..id") {
		t.Errorf("a bad tenant path: %v", err)
	}
}

func TestFilterLineSplitsOnSpacesAndSearchesBareWords(t *testing.T) {
	ts := filterBatch(t, redact.New())
	f, err := ParseLine(` reason=rejected   "card declined" `, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(f.Apply(ts)); !slices.Equal(got, []string{"m-1"}) {
		t.Errorf("got %v", got)
	}
	if want := []string{"reason=rejected", `text~"card declined"`}; !slices.Equal(f.Exprs(), want) {
		t.Errorf("exprs %q, want %q", f.Exprs(), want)
	}
	if f.String() != `reason=rejected and text~"card declined"` {
		t.Errorf("String() = %q", f.String())
	}
	empty, err := ParseLine("   ", Options{})
	if err != nil || !empty.Empty() || len(empty.Apply(ts)) != len(ts) {
		t.Errorf("a blank line must match everything: %v", err)
	}
}

func TestSelectionWhereNarrowsAGroupOrSelectsAlone(t *testing.T) {
	ts := filterBatch(t, redact.New())
	f, err := ParseWhere([]string{"tenant=acme"}, Options{TenantPath: "$.customer.tenant_id"})
	if err != nil {
		t.Fatal(err)
	}
	g := triage.GroupKey{Reason: triage.ReasonRejected, AnyCode: true}
	narrowed := triage.Selection{Group: &g, Where: &f}
	if err := narrowed.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := ids(narrowed.Apply(ts)); !slices.Equal(got, []string{"m-1", "m-3"}) {
		t.Errorf("group rejected where tenant=acme: %v", got)
	}
	alone := triage.Selection{Where: &f}
	if err := alone.Validate(); err != nil {
		t.Fatalf("a filter alone is a selection: %v", err)
	}
	if got := ids(alone.Apply(ts)); !slices.Equal(got, []string{"m-1", "m-3"}) {
		t.Errorf("where tenant=acme: %v", got)
	}
	if s := alone.String(); s != "every message where tenant=acme" {
		t.Errorf("String() = %q", s)
	}
	if s := narrowed.String(); s != "group rejected where tenant=acme" {
		t.Errorf("String() = %q", s)
	}
	if err := (triage.Selection{Where: &Filter{}}).Validate(); err == nil {
		t.Error("an empty filter alone selected every message")
	}
}

// A cache gives the answers a fresh redaction gives, and never serves text
// made by one redactor to a filter using another.
func TestSearchCacheAgreesAndFollowsTheRedactor(t *testing.T) {
	loose := redact.New()
	ts := filterBatch(t, loose)
	cache := NewSearchCache(0)
	for _, exprs := range [][]string{{"text~declined"}, {"tenant=acme"}, {"text~order.created", "tenant!=globex"}} {
		plain, err := ParseWhere(exprs, Options{TenantPath: "customer.tenant_id", Redactor: loose})
		if err != nil {
			t.Fatal(err)
		}
		cached, _ := ParseWhere(exprs, Options{TenantPath: "customer.tenant_id", Redactor: loose, Cache: cache})
		for range 2 { // the second pass reads the cache
			if got, want := ids(cached.Apply(ts)), ids(plain.Apply(ts)); !slices.Equal(got, want) {
				t.Errorf("%v: cached %v, fresh %v", exprs, got, want)
			}
		}
	}
	strict := redact.New().WithPaths([]redact.PathRule{{Path: mustPath(t, "customer.tenant_id"), Mask: redact.MaskFull}})
	f, _ := ParseWhere([]string{"tenant=acme"}, Options{TenantPath: "customer.tenant_id", Redactor: strict, Cache: cache})
	if got := f.Apply(ts); len(got) != 0 {
		t.Errorf("a stricter redactor read the looser one's cache: %v", ids(got))
	}
}

// A journalled plan keeps its filter as the expressions; read back, the
// filter says what was selected but can select nothing by itself.
func TestFilterJSONIsARecord(t *testing.T) {
	f, err := ParseWhere([]string{"reason=rejected", "text~card declined"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := triage.GroupKey{Reason: triage.ReasonRejected, AnyCode: true}
	raw, err := json.Marshal(triage.Selection{Group: &g, Where: &f})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"where":["reason=rejected","text~card declined"]`) {
		t.Errorf("selection JSON %s", raw)
	}
	var back triage.Selection
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.String() != "group rejected where reason=rejected and text~card declined" || back.Where.Empty() {
		t.Errorf("read back: %q", back.String())
	}
	if got := back.Apply(filterBatch(t, redact.New())); len(got) != 0 {
		t.Errorf("a recorded filter selected %v", ids(got))
	}
	var none triage.Selection
	if err := json.Unmarshal([]byte(`{"IDs":["a"],"Group":null}`), &none); err != nil || none.Where != nil {
		t.Errorf("a plan journalled before filters: %v %+v", err, none)
	}
	var empty triage.Selection
	if err := json.Unmarshal([]byte(`{"IDs":["a"],"where":[]}`), &empty); err != nil || empty.Where == nil ||
		!empty.Where.Empty() || !empty.Where.Match(triage.Triaged{}) {
		t.Errorf("an empty filter read back narrows nothing, as it did when parsed: %v %+v", err, empty)
	}
}

func TestNarrowRegroupsWhatMatchesAndKeepsTheBatch(t *testing.T) {
	ts := filterBatch(t, redact.New())
	in := triage.Inspection{Batch: triage.Batch{Queue: "nghia-dia", Depth: 4}, Messages: ts, Groups: triage.GroupMessages(ts)}
	f, err := ParseWhere([]string{"reason=rejected"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := f.Narrow(in)
	if !slices.Equal(ids(got.Messages), []string{"m-1", "m-3"}) {
		t.Errorf("messages %v, want m-1 and m-3", ids(got.Messages))
	}
	if len(got.Groups) != 2 || got.Groups[0].Count+got.Groups[1].Count != 2 {
		t.Errorf("groups %+v, want the two rejected codes, one message each", got.Groups)
	}
	if got.Batch.Depth != 4 || len(in.Messages) != 4 {
		t.Errorf("the batch or the input changed: depth %d, input %d messages", got.Batch.Depth, len(in.Messages))
	}
	if all := (Filter{}).Narrow(in); len(all.Messages) != 4 || len(all.Groups) != len(in.Groups) {
		t.Errorf("an empty filter narrowed: %d messages, %d groups", len(all.Messages), len(all.Groups))
	}
}

// A cache with a limit keeps entries up to it and answers the rest afresh:
// the answers are the same, and what it holds stays within the limit.
func TestSearchCacheStaysWithinItsLimit(t *testing.T) {
	red := redact.New()
	ts := filterBatch(t, red)
	plain, _ := ParseWhere([]string{"text~declined"}, Options{Redactor: red})
	full := NewSearchCache(0)
	all, _ := ParseWhere([]string{"text~declined"}, Options{Redactor: red, Cache: full})
	all.Apply(ts)
	if len(full.entries) != len(ts) {
		t.Fatalf("an unlimited cache holds %d of %d", len(full.entries), len(ts))
	}
	limit := full.used / 2
	half := NewSearchCache(limit)
	f, _ := ParseWhere([]string{"text~declined"}, Options{Redactor: red, Cache: half})
	for range 2 {
		if got, want := ids(f.Apply(ts)), ids(plain.Apply(ts)); !slices.Equal(got, want) {
			t.Errorf("limited cache %v, fresh %v", got, want)
		}
	}
	if half.used > limit || len(half.entries) == 0 || len(half.entries) >= len(ts) {
		t.Errorf("a cache limited to %d bytes holds %d bytes in %d of %d entries", limit, half.used, len(half.entries), len(ts))
	}
}
