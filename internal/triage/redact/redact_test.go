package redact

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dlqt/dlqt/internal/triage/redact/redacttest"
)

func TestRedactTextByShape(t *testing.T) {
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"jwt", "token " + redacttest.JWT + " used", "token [REDACTED:jwt] used", 1},
		{"bearer jwt is named as a jwt", "Bearer " + redacttest.JWT, "Bearer [REDACTED:jwt]", 1},
		{"bearer opaque token", "sent Bearer " + redacttest.Opaque + " upstream", "sent Bearer [REDACTED:bearer] upstream", 1},
		{"basic credentials", "auth header was Basic " + redacttest.Basic, "auth header was Basic [REDACTED:basic]", 1},
		{"card with spaces keeps last 4", "paid with " + redacttest.Visa + " today", "paid with [REDACTED:card ...1111] today", 1},
		{"card with dashes", "card 5555-5555-5555-4444.", "card [REDACTED:card ...4444].", 1},
		{"card digits only", "pan=" + redacttest.VisaRaw, "pan=[REDACTED:card ...1111]", 1},
		{"amex 15 digits", "378282246310005", "[REDACTED:card ...0005]", 1},
		{"pem private key", "key:\n" + redacttest.PEM + "\nend", "key:\n[REDACTED:private-key]\nend", 1},
		{"truncated pem", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAA", "[REDACTED:private-key]", 1},
		{"openssh key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----", "[REDACTED:private-key]", 1},
		{"aws access key id", "id " + redacttest.AWSKey + " in us-east-1", "id [REDACTED:aws-key] in us-east-1", 1},
		{"aws session key id", "ASIA" + "Y34FZKBOKMUTVV7A", "[REDACTED:aws-key]", 1},
		{"google api key", "key " + redacttest.Google, "key [REDACTED:google-key]", 1},
		{"github token", "push with " + redacttest.GitHub, "push with [REDACTED:github-token]", 1},
		{"github fine-grained token", "github_pat_" + "11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789", "[REDACTED:github-token]", 1},
		{"slack token", "slack " + redacttest.Slack, "slack [REDACTED:slack-token]", 1},
		{"stripe key", redacttest.Stripe, "[REDACTED:stripe-key]", 1},
		{"url password", "dial amqp://orders:s3cr3t@rabbit.internal:5672/prod", "dial amqp://orders:[REDACTED:password]@rabbit.internal:5672/prod", 1},
		{"url password with an unencoded @", "amqp://u:p@ss@h/v?to=a@b.co", "amqp://u:[REDACTED:password]@h/v?to=a***@b.co", 2},
		{"jwt glued to a word", "jwt_" + redacttest.JWT, "jwt_[REDACTED:jwt]", 1},
		{"url password with an unencoded #", "postgres://app:Lc0#jAbE@db:5432/x", "postgres://app:[REDACTED:password]@db:5432/x", 1},
		{"url password, https", "https://bob:pa55@example.com/x", "https://bob:[REDACTED:password]@example.com/x", 1},
		{"email partly masked", "customer jane.doe@example.com complained", "customer j***@example.com complained", 1},
		{"two emails", "from a@b.io to zed@mail.example.org", "from a***@b.io to z***@mail.example.org", 2},
		{"a phone number is a phone, not a card", "phone +1 555-123-4567", "phone [REDACTED:phone]", 1},
		{"several kinds at once", redacttest.AWSKey + " " + redacttest.Visa + " x@y.com", "[REDACTED:aws-key] [REDACTED:card ...1111] x***@y.com", 3},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := r.Text(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("Text(%q)\n got %q (%d)\nwant %q (%d)", tt.in, got, n, tt.want, tt.n)
			}
		})
	}
}

func TestRedactTextKeyValueForms(t *testing.T) {
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"key=value", "user=bob password=hunter2 retry=3", "user=bob password=[REDACTED] retry=3", 1},
		{"query string", "/login?user=bob&pwd=hunter2&next=/", "/login?user=bob&pwd=[REDACTED]&next=/", 1},
		{"key: value to end of line", "Authorization: Bearer abc\nHost: x", "Authorization: [REDACTED]\nHost: x", 1},
		{"yaml", "db:\n  password: hunter2\n  host: db1", "db:\n  password: [REDACTED]\n  host: db1", 1},
		{"json-like text that did not parse", `{"user": "bob", "api_key": "k-123", `, `{"user": "bob", "api_key": "[REDACTED]", `, 1},
		{"quoted value with escaped quote", `secret="a\"b" next=1`, `secret="[REDACTED]" next=1`, 1},
		{"key inside a harmless value", "note: retried; token=abc123", "note: retried; token=[REDACTED]", 1},
		{"connection string", "Server=db;User Id=sa;Password=Pa55w0rd;", "Server=db;User Id=sa;Password=[REDACTED];", 1},
		{"cookie header", "Cookie: session=abc; theme=dark", "Cookie: [REDACTED]", 1},
		{"null stays", "password: null", "password: null", 0},
		{"harmless keys stay", "author: Jane\ndiscard=true\ncardinality: 12\ntokenizer_version: 3", "author: Jane\ndiscard=true\ncardinality: 12\ntokenizer_version: 3", 0},
		{"url scheme is not a key", "see https://example.com/a", "see https://example.com/a", 0},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := r.Text(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("Text(%q)\n got %q (%d)\nwant %q (%d)", tt.in, got, n, tt.want, tt.n)
			}
		})
	}
}

// Shapes that look a little like secrets but are not, and must stay readable.
func TestRedactTextLeavesNonSecrets(t *testing.T) {
	keep := []string{
		"order 4111111111111112 failed",        // 16 digits, Luhn fails
		"occurred_at 1732972800123 (epoch ms)", // 13 digits, not a card prefix
		"trace 1732972800123456789",            // epoch ns
		"id 41111111111111111111111",           // too long to be a card
		"ext 555-1234 or 4111 1111",            // too short for a card or a phone
		"uuid 550e8400-e29b-41d4-a716-446655440000",
		"the bearer of bad news",              // prose, short word
		"basic understanding of the protocol", // not base64 user:pass
		"eyJ alone is not a jwt",
		"AKIA1234 too short",
		"routing key orders.created at 2024-11-30T10:00:00Z",
		"amqp://rabbit.internal:5672/vhost", // no userinfo
		"user@localhost",                    // no TLD: not an address we mask
	}
	r := New()
	for _, s := range keep {
		if got, n := r.Text(s); got != s || n != 0 {
			t.Errorf("Text(%q) = %q (%d), want it unchanged", s, got, n)
		}
	}
}

func TestSecretKey(t *testing.T) {
	secret := []string{
		"password", "Password", "passwd", "pwd", "db_password", "newPassword", "PASSWORD_HASH",
		"secret", "client_secret", "clientSecret", "webhook-secret",
		"token", "access_token", "refresh_token", "id_token", "X-Auth-Token", "auth_token", "csrfToken",
		"api_key", "apikey", "apiKey", "x-api-key", "X-API-KEY",
		"authorization", "Authorization", "proxy-authorization",
		"cookie", "Set-Cookie", "session", "session_id", "sessionId",
		"card", "card_number", "cardNumber", "credit_card", "pan", "cvv", "cvc", "cvv2", "card.cvv",
		"iban", "payee_iban", "private_key", "privateKey", "ssn", "credential", "credentials",
		"aws_access_key_id", "access_key", "secret_access_key", "AWS_SECRET_ACCESS_KEY",
		"auth", "jwt", "passphrase", "pin",
	}
	harmless := []string{
		"author", "authors", "authority", "authenticated", "discard", "cardinality", "card_last4",
		"cardholder", "tokenizer_version", "token_type", "token_count", "max_tokens", "japan", "span",
		"session_timeout", "routing_key", "idempotency_key", "partition_key", "keyboard",
		"passenger", "bypass", "secretary", "pinned", "message_id", "",
	}
	r := New()
	for _, k := range secret {
		if !r.SecretKey(k) {
			t.Errorf("SecretKey(%q) = false, want true", k)
		}
	}
	for _, k := range harmless {
		if r.SecretKey(k) {
			t.Errorf("SecretKey(%q) = true, want false", k)
		}
	}
	var none *Redactor
	if none.SecretKey("password") {
		t.Error("a nil Redactor found a secret key")
	}
}

func TestMaskStyles(t *testing.T) {
	r := (*Redactor)(nil).With(
		[]KeyRule{{Name: "Order-Ref", Match: MatchExact, Mask: MaskPartial}, {Name: "customer", Match: MatchExact, Mask: MaskHash}},
		[]ValueRule{{Kind: "ticket", Pattern: regexp.MustCompile(`TCK-\d+`), Mask: MaskHash}},
	)
	got, n := r.Text("order_ref=ABCD-987654 customer=alice see TCK-42 and TCK-42")
	hash := maskValue("ticket", "TCK-42", MaskHash)
	want := "order_ref=[REDACTED ...7654] customer=" + maskKeyed("alice", MaskHash) + " see " + hash + " and " + hash
	if got != want || n != 4 {
		t.Fatalf("got %q (%d), want %q (4)", got, n, want)
	}
	if !regexp.MustCompile(`^\[REDACTED:ticket sha256:[0-9a-f]{8}\]$`).MatchString(hash) {
		t.Errorf("hash mask %q is not [REDACTED:ticket sha256:xxxxxxxx]", hash)
	}
	if maskKeyed("alice", MaskHash) == maskKeyed("bob", MaskHash) {
		t.Error("different secrets share a fingerprint")
	}
}

func TestEmailPartialMask(t *testing.T) {
	tests := map[string]string{
		"jane@example.com":              "j***@example.com",
		"j@example.com":                 "j***@example.com",
		"first.last+tag@sub.corp.co.uk": "f***@sub.corp.co.uk",
	}
	r := New()
	for in, want := range tests {
		if got, n := r.Text(in); got != want || n != 1 {
			t.Errorf("Text(%q) = %q (%d), want %q (1)", in, got, n, want)
		}
	}
}

func TestNilRedactorRedactsNothing(t *testing.T) {
	var r *Redactor
	in := "password=hunter2 " + redacttest.JWT
	if got, n := r.Text(in); got != in || n != 0 {
		t.Errorf("nil Text changed %q to %q (%d)", in, got, n)
	}
}

func TestMasksArePlainASCII(t *testing.T) {
	r := New()
	in := strings.Join([]string{redacttest.JWT, redacttest.PEM, redacttest.GitHub, redacttest.Visa, "a@b.co", "password=x"}, " ")
	got, _ := r.Text(in)
	for i := 0; i < len(got); i++ {
		if got[i] >= 0x80 {
			t.Fatalf("non-ASCII byte in %q", got)
		}
	}
}
