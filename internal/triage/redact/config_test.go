package redact

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// configured is what a config file with one rule of each kind builds: the
// defaults plus a key, a path and a pattern, each with the given mask.
func configured(t *testing.T, m Mask) *Redactor {
	t.Helper()
	ticket, err := PatternRule("internal-ticket", `TCK-[0-9]{6}`, m)
	if err != nil {
		t.Fatal(err)
	}
	return New().
		With([]KeyRule{{Name: "national_id", Match: MatchExact, Mask: m}}, []ValueRule{ticket}).
		WithPaths([]PathRule{{Path: mustPath(t, "customer.tax_id"), Mask: m}})
}

// Every default detector still masks once custom rules are added: configured
// rules extend the defaults, never replace them.
func TestDefaultDetectorsStayOnWithConfiguredRules(t *testing.T) {
	secrets := map[string]string{
		"password key":   `{"password":"hunter2-hunter2"}`,
		"api key":        `{"x-api-key":"k-1234567890abcdef"}`,
		"token suffix":   `{"refresh_token":"r-1234567890abcdef"}`,
		"ssn exact":      `{"ssn":"078-05-1120"}`,
		"iban suffix":    `{"payer_iban":"DE89370400440532013000"}`,
		"private-key":    `{"note":"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA75\n-----END RSA PRIVATE KEY-----"}`,
		"jwt":            `{"note":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}`,
		"bearer":         `{"note":"Bearer abcdefghijklmnop1234"}`,
		"basic":          `{"note":"Basic dXNlcjpwYXNzd29yZA=="}`,
		"url password":   `{"note":"amqp://app:s3cr3t-pass@rabbit:5672/"}`,
		"aws-key":        `{"note":"AKIAIOSFODNN7EXAMPLE"}`,
		"google-key":     `{"note":"AIzaSyA1234567890abcdefghijklmnopqrstuv"}`,
		"github-token":   `{"note":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`,
		"slack-token":    `{"note":"xoxb-1234567890-abcdefghij"}`,
		"stripe-key":     `{"note":"sk_live_abcdefghijklmnop1234"}`,
		"card":           `{"note":"card 4111 1111 1111 1111 on file"}`,
		"card as number": `{"amount_ref":4111111111111111}`,
		"email":          `{"note":"write to jane.doe@example.com"}`,
	}
	hidden := map[string]string{
		"password key": "hunter2", "api key": "k-1234567890abcdef", "token suffix": "r-1234567890abcdef",
		"ssn exact": "078-05-1120", "iban suffix": "DE89370400440532013000", "private-key": "MIIEpAIBAAKCAQEA75",
		"jwt": "eyJhbGciOiJIUzI1NiJ9", "bearer": "abcdefghijklmnop1234", "basic": "dXNlcjpwYXNzd29yZA",
		"url password": "s3cr3t-pass", "aws-key": "AKIAIOSFODNN7EXAMPLE", "google-key": "AIzaSyA1234567890",
		"github-token": "ghp_abcdefghijklmnop", "slack-token": "xoxb-1234567890", "stripe-key": "sk_live_abcdefgh",
		"card": "4111 1111 1111 1111", "card as number": "4111111111111111", "email": "jane.doe@",
	}
	for _, m := range []Mask{MaskFull, MaskPartial, MaskHash} {
		red := configured(t, m)
		for name, body := range secrets {
			p := renderJSON(t, []byte(body), red)
			if strings.Contains(p.Text, hidden[name]) || p.Redactions == 0 {
				t.Errorf("%s (custom rules %s): %q shows %q", name, m, p.Text, hidden[name])
			}
			if !json.Valid([]byte(p.Text)) {
				t.Errorf("%s: the redacted payload is no longer JSON: %s", name, p.Text)
			}
		}
	}
}

// A custom rule of each kind, in each mask style, in a JSON payload.
func TestConfiguredRulesOfEachKindAndMask(t *testing.T) {
	body := `{"customer":{"national_id":"880101-1234567","tax_id":"VN-0312345678","tenant":"acme",` +
		`"billing":{"tax_id":"stays-visible"}},"note":"see TCK-123456","tax_id":"also-visible"}`
	for _, m := range []Mask{MaskFull, MaskPartial, MaskHash} {
		t.Run(m.String(), func(t *testing.T) {
			p := renderJSON(t, []byte(body), configured(t, m))
			var doc struct {
				Customer struct {
					NationalID string `json:"national_id"`
					TaxID      string `json:"tax_id"`
					Tenant     string `json:"tenant"`
					Billing    struct {
						TaxID string `json:"tax_id"`
					} `json:"billing"`
				} `json:"customer"`
				Note  string `json:"note"`
				TaxID string `json:"tax_id"`
			}
			if err := json.Unmarshal([]byte(p.Text), &doc); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, p.Text)
			}
			want := map[string]*regexp.Regexp{
				"full":    regexp.MustCompile(`^\[REDACTED(:internal-ticket)?\]$`),
				"partial": regexp.MustCompile(`^\[REDACTED(:internal-ticket)? \.\.\.[0-9]{4}\]$`),
				"hash":    regexp.MustCompile(`^\[REDACTED(:internal-ticket)? sha256:[0-9a-f]{8}\]$`),
			}[m.String()]
			for what, got := range map[string]string{"key national_id": doc.Customer.NationalID,
				"path customer.tax_id": doc.Customer.TaxID, "pattern internal-ticket": strings.TrimPrefix(doc.Note, "see ")} {
				if !want.MatchString(got) {
					t.Errorf("%s: %q, want a %s mask", what, got, m)
				}
			}
			if m == MaskPartial && (doc.Customer.NationalID != "[REDACTED ...4567]" || doc.Customer.TaxID != "[REDACTED ...5678]") {
				t.Errorf("partial masks keep the last 4: %q %q", doc.Customer.NationalID, doc.Customer.TaxID)
			}
			if !strings.Contains(doc.Note, "internal-ticket") {
				t.Errorf("a pattern's mask names it: %q", doc.Note)
			}
			// The path names one place: the same key elsewhere stays.
			if doc.Customer.Billing.TaxID != "stays-visible" || doc.TaxID != "also-visible" || doc.Customer.Tenant != "acme" {
				t.Errorf("a path rule masked beyond its path: %s", p.Text)
			}
			if p.Redactions != 3 {
				t.Errorf("%d redactions, want 3: %s", p.Redactions, p.Text)
			}
		})
	}
	// Equal secrets hash alike, different ones do not.
	red := configured(t, MaskHash)
	a := renderJSON(t, []byte(`{"national_id":"A-1"}`), red).Text
	b := renderJSON(t, []byte(`{"national_id":"A-1"}`), red).Text
	c := renderJSON(t, []byte(`{"national_id":"A-2"}`), red).Text
	if a != b || a == c {
		t.Errorf("hash masks: %s / %s / %s", a, b, c)
	}
}

func TestConfiguredRulesInTextAndHeaders(t *testing.T) {
	red := configured(t, MaskFull)
	got, n := red.Text("national_id=880101-1234567 ref TCK-654321")
	if got != "national_id=[REDACTED] ref [REDACTED:internal-ticket]" || n != 2 {
		t.Errorf("text: %q (%d)", got, n)
	}
	h, n := Headers(headers{"National-Id": "880101-1234567", "x-ticket": "TCK-111111"}, red)
	if h["National-Id"] != "[REDACTED]" || h["x-ticket"] != "[REDACTED:internal-ticket]" || n != 2 {
		t.Errorf("headers: %v (%d)", h, n)
	}
}

func TestPathRulesMaskSubtreesArraysAndKeepNull(t *testing.T) {
	red := (*Redactor)(nil).WithPaths([]PathRule{
		{Path: mustPath(t, "$.items[*].pan"), Mask: MaskFull},
		{Path: mustPath(t, "items[0].owner"), Mask: MaskFull},
		{Path: mustPath(t, "profile"), Mask: MaskFull},
		{Path: mustPath(t, "codes[*]"), Mask: MaskFull},
	})
	body := `{"items":[{"pan":"5500-0000","owner":"a"},{"pan":"5500-0001","owner":"b"},{"pan":null}],` +
		`"profile":{"dob":"1990-01-01","kids":[1,2]},"codes":["x1","x2"]}`
	p := renderJSON(t, []byte(body), red)
	for _, secret := range []string{"5500-0000", "5500-0001", `"a"`, "1990-01-01", "x1", "x2"} {
		if strings.Contains(p.Text, secret) {
			t.Errorf("%s shows in %s", secret, p.Text)
		}
	}
	if !strings.Contains(p.Text, `"owner": "b"`) || !strings.Contains(p.Text, `"pan": null`) {
		t.Errorf("index 0 only, null kept: %s", p.Text)
	}
	if p.Redactions != 6 {
		t.Errorf("%d redactions, want 6: %s", p.Redactions, p.Text)
	}
}

func TestParseJSONPathAndConfigNames(t *testing.T) {
	for _, good := range []string{"tenant", "$.tenant", "customer.tax_id", "items[*].card", "$[0].id", "a[1][*].b"} {
		if _, err := ParseJSONPath(good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	for _, bad := range []string{"", "$", "a..b", "a.", "items[x]", "items[*", "a]b", "items[-1]"} {
		if _, err := ParseJSONPath(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := ParseMask("blur"); err == nil || !strings.Contains(err.Error(), `"blur"`) {
		t.Errorf("mask blur: %v", err)
	}
	if _, err := ParseKeyMatch("prefix"); err == nil || !strings.Contains(err.Error(), `"prefix"`) {
		t.Errorf("match prefix: %v", err)
	}
	if _, err := PatternRule("ticket", `TCK-[0-9`, MaskFull); err == nil || !strings.Contains(err.Error(), "ticket") {
		t.Errorf("bad regex: %v", err)
	}
	if _, err := PatternRule("anything", `x*`, MaskFull); err == nil || !strings.Contains(err.Error(), "empty string") {
		t.Errorf("empty-matching regex: %v", err)
	}
	if _, err := PatternRule("", `x+`, MaskFull); err == nil {
		t.Error("a pattern without a name was accepted")
	}
}

// A partial mask of a short secret would show most of it: no hint then.
func TestPartialMaskOfAShortSecretShowsNothing(t *testing.T) {
	red := (*Redactor)(nil).With([]KeyRule{{Name: "pin", Mask: MaskPartial}}, nil)
	if got, _ := red.Text("pin=4821"); got != "pin=[REDACTED]" {
		t.Errorf("got %q", got)
	}
	if got, _ := red.Text("pin=12345678"); got != "pin=[REDACTED ...5678]" {
		t.Errorf("got %q", got)
	}
}

func mustPath(t *testing.T, s string) JSONPath {
	t.Helper()
	p, err := ParseJSONPath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// payload is what a JSON body renders to: what core triage's RenderPayload
// shows for one (it sanitises too, which leaves this output as it is).
type payload struct {
	Text       string
	Redactions int
}

func renderJSON(t *testing.T, body []byte, red *Redactor) payload {
	t.Helper()
	text, n, unread, err := red.JSON(body, 0)
	if err != nil || unread != 0 {
		t.Fatalf("JSON(%s): %v (unread %d)", body, err, unread)
	}
	return payload{Text: text, Redactions: n}
}
