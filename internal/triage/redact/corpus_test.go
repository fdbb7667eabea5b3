package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// A corpus of real-shaped secrets and personal data, generated here so no
// real one is ever written down, against look-alikes that must stay
// readable. Each item is planted three ways: as the value of an innocuous
// JSON key, inside free text, and as a header value.

// plant is one corpus item: what goes into a message, what must not be
// readable afterwards, and the mask it should be named by.
type plant struct {
	planted string
	hidden  []string
	kind    string // "" for a key=value mask without a kind
}

const corpusAlphanum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

type corpusGen struct{ rng *rand.Rand }

func (g corpusGen) pick(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(b)
}

func (g corpusGen) digits(n int) string { return g.pick("0123456789", n) }

// mixed is random text of the alphabet with at least one upper, lower and
// digit, as real random tokens of that length practically always have.
func (g corpusGen) mixed(alphabet string, n int) string {
	for {
		if s := g.pick(alphabet, n); mixedCase(s) {
			return s
		}
	}
}

// iban builds a valid IBAN for a country from a random BBAN: letters where
// the country's bank code has them, digits elsewhere.
func (g corpusGen) iban(country string, letters int) string {
	bban := g.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ", letters) + g.digits(ibanLengths[country]-4-letters)
	return country + ibanCheckDigits(country, bban) + bban
}

func ibanCheckDigits(country, bban string) string {
	rem := 0
	for _, c := range []byte(bban + country + "00") {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A') + 10) % 97
		}
	}
	return fmt.Sprintf("%02d", 98-rem)
}

func groupIBAN(iban string) string {
	var parts []string
	for i := 0; i < len(iban); i += 4 {
		parts = append(parts, iban[i:min(i+4, len(iban))])
	}
	return strings.Join(parts, " ")
}

func (g corpusGen) ssn() string {
	area := 1 + g.rng.IntN(898)
	if area == 666 {
		area = 667
	}
	return fmt.Sprintf("%03d-%02d-%04d", area, 1+g.rng.IntN(99), 1+g.rng.IntN(9999))
}

func (g corpusGen) card() string {
	prefixes := []string{"4", "51", "52", "53", "54", "55", "2221", "34", "37", "6011", "35"}
	p := prefixes[g.rng.IntN(len(prefixes))]
	n := 16
	if p == "34" || p == "37" {
		n = 15
	}
	body := []byte(p + g.digits(n-len(p)-1) + "0")
	for d := byte('0'); d <= '9'; d++ {
		body[n-1] = d
		if luhn(body) {
			break
		}
	}
	return string(body)
}

func (g corpusGen) phone(form int) string {
	area := fmt.Sprintf("%d%s", 2+g.rng.IntN(8), g.digits(2))
	ex, line := g.digits(3), g.digits(4)
	switch form % 6 {
	case 0:
		return "+49151" + g.digits(8)
	case 1:
		return "(" + area + ") " + ex + "-" + line
	case 2:
		return area + "-" + ex + "-" + line
	case 3:
		return "+1 " + area + " " + ex + " " + line
	case 4:
		return "+44 20 " + g.digits(4) + " " + g.digits(4)
	}
	return "+33 6 " + g.digits(2) + " " + g.digits(2) + " " + g.digits(2) + " " + g.digits(2)
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// corpusSecrets generates the secrets and personal data of every kind.
func corpusSecrets(g corpusGen) []plant {
	var out []plant
	add := func(kind, planted string, hidden ...string) {
		if len(hidden) == 0 {
			hidden = []string{planted}
		}
		out = append(out, plant{planted: planted, hidden: hidden, kind: kind})
	}
	ibanCountries := []struct {
		cc      string
		letters int
	}{{"DE", 0}, {"GB", 4}, {"FR", 0}, {"NL", 4}, {"ES", 0}, {"IT", 1}, {"CH", 0}, {"BE", 0}, {"AT", 0}, {"PL", 0}, {"NO", 0}, {"SE", 0}}
	for i := range 48 {
		c := ibanCountries[i%len(ibanCountries)]
		iban := g.iban(c.cc, c.letters)
		shown := iban
		if i%2 == 0 {
			shown = groupIBAN(iban)
		}
		add("iban", shown, shown[:len(shown)-4]) // a partial mask keeps the last 4
	}
	for range 30 {
		add("ssn", g.ssn())
	}
	for i := range 42 {
		add("phone", g.phone(i))
	}
	for range 20 {
		id := "AKIA" + g.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
		secret := g.mixed(corpusAlphanum+"+/", 40)
		add("aws-secret", id+" "+secret, id, secret)
	}
	for range 20 {
		// An AWS secret access key alone, with no key id or the word
		// aws/secret near it: only its look gives it away.
		add("secret", g.mixed(corpusAlphanum+"+/", 40))
		// An opaque API token of a service with no rule of its own.
		add("secret", g.mixed(corpusAlphanum+"_-", 32+g.rng.IntN(33)))
	}
	for range 15 {
		add("github-token", "ghp_"+g.pick(corpusAlphanum, 36))
		add("slack-token", "xoxb-"+g.digits(12)+"-"+g.digits(13)+"-"+g.pick(corpusAlphanum, 24))
	}
	for range 20 {
		jwt := b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + b64url(`{"sub":"`+g.digits(10)+`","iat":1732972800}`) + "." + g.pick(corpusAlphanum+"-_", 43)
		add("jwt", jwt, jwt[strings.LastIndexByte(jwt, '.')-20:])
		tok := g.pick(corpusAlphanum+"-._~", 32)
		add("bearer", "Bearer "+tok, tok)
	}
	for range 10 {
		body := g.pick(corpusAlphanum+"+/", 64)
		add("private-key", "-----BEGIN RSA PRIVATE KEY-----\n"+body+"\n"+g.pick(corpusAlphanum+"+/", 64)+"\n-----END RSA PRIVATE KEY-----", body)
	}
	for i := range 30 {
		c := g.card()
		if i%2 == 0 {
			c = c[:4] + " " + c[4:8] + " " + c[8:12] + " " + c[12:]
		}
		add("card", c, c[:len(c)-4])
	}
	for i := range 21 {
		pw := g.mixed(corpusAlphanum+"!#%^*", 16)
		switch i % 3 {
		case 0:
			add("password", "postgres://app:"+pw+"@db.internal:5432/orders", pw)
		case 1:
			add("password", "amqp://orders:"+pw+"@rabbit.internal:5672/prod", pw)
		default:
			add("", "Server=db;User Id=sa;Password="+pw+";", pw)
		}
	}
	return out
}

// corpusLookalikes generates values of the shapes the detectors must not
// take for secrets.
func corpusLookalikes(g corpusGen) []string {
	var out []string
	for i := range 20 {
		u := g.pick("0123456789abcdef", 32)
		out = append(out, u[:8]+"-"+u[8:12]+"-4"+u[13:16]+"-a"+u[17:20]+"-"+u[20:])
		out = append(out, g.pick("0123456789abcdef", 64))                                                      // SHA-256
		out = append(out, g.pick("0123456789abcdef", 40))                                                      // git SHA
		out = append(out, fmt.Sprintf("ORD-%d-%06d", 2020+i%6, g.rng.IntN(1000000)))                           // order number
		out = append(out, fmt.Sprintf("2026-%02d-%02dT%02d:%02d:%02dZ", 1+i%12, 1+i%28, i%24, i%60, (7*i)%60)) // ISO time
		out = append(out, fmt.Sprintf("2026-11-30T10:00:%02d.%03d+01:00", i%60, g.rng.IntN(1000)))
		out = append(out, strconv.FormatInt(1700000000000+g.rng.Int64N(100000000000), 10)) // epoch ms
		out = append(out, fmt.Sprintf("%d.%d.%d", g.rng.IntN(20), g.rng.IntN(30), g.rng.IntN(100)))
		out = append(out, fmt.Sprintf("v%d.%d.%d-rc.%d", g.rng.IntN(20), g.rng.IntN(30), g.rng.IntN(100), i))
		out = append(out, fmt.Sprintf("%d.%d.%d.%d", 1+g.rng.IntN(254), g.rng.IntN(256), g.rng.IntN(256), 1+g.rng.IntN(254)))
		out = append(out, fmt.Sprintf("%d.%02d", g.rng.IntN(100000), g.rng.IntN(100)))
		out = append(out, fmt.Sprintf("EUR %d,%03d.%02d", 1+g.rng.IntN(999), g.rng.IntN(1000), g.rng.IntN(100)))
		out = append(out, g.digits(9)) // a nine-digit id
		iban := g.iban("DE", 0)
		bad := iban[:2] + fmt.Sprintf("%02d", (atoi(iban[2:4])+1+g.rng.IntN(90))%100) + iban[4:]
		if ibanChecksum([]byte(bad)) {
			bad = iban[:len(iban)-1] + string('0'+(iban[len(iban)-1]-'0'+1)%10)
		}
		if i%2 == 0 {
			bad = groupIBAN(bad)
		}
		out = append(out, bad)
		// Long mixed-case words and paths a token detector must leave alone.
		out = append(out, strings.ToUpper(g.pick("0123456789abcdef", 40)))                                     // an upper-case digest
		out = append(out, fmt.Sprintf("/api/v%d/customers/%d/paymentMethods/default", 1+i%3, g.rng.IntN(1e6))) // a URL path
		out = append(out, fmt.Sprintf("PaymentGatewayTimeoutException%d", i))                                  // an exception name
		out = append(out, fmt.Sprintf("OrderCreatedEventV%dHandlerForEU%dRegion", 1+i%3, i))                   // a camelCase name
		out = append(out, fmt.Sprintf("com_example_OrderService_v%d_handleOrderCreated", 1+i%3))
		out = append(out, fmt.Sprintf("orders-v%d-ConsumerRetryHandlerFactory-%d", i%4, g.rng.IntN(100))) // a component name
		out = append(out, fmt.Sprintf("ORD-%d-%06d-EU-%s", 2020+i%6, g.rng.IntN(1000000), g.pick("ABCDEFGHJK", 4)))
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// plantings are the three ways a value reaches redaction.
var plantings = []struct {
	name   string
	render func(r *Redactor, v string) (string, int)
}{
	{"json value", func(r *Redactor, v string) (string, int) {
		doc, _ := json.Marshal(map[string]any{"note": v, "attempt": 3})
		out, n, _, err := r.JSON(doc, 0)
		if err != nil {
			return "error: " + err.Error(), n
		}
		var back map[string]any
		if json.Unmarshal([]byte(out), &back) != nil {
			return "invalid JSON: " + out, n
		}
		return back["note"].(string), n
	}},
	{"free text", func(r *Redactor, v string) (string, int) {
		out, n := r.Text("payment failed for order 42, detail: " + v + " (retry 3 of 5)")
		return strings.TrimSuffix(strings.TrimPrefix(out, "payment failed for order 42, detail: "), " (retry 3 of 5)"), n
	}},
	{"header", func(r *Redactor, v string) (string, int) {
		h, n := Headers(headers{"x-note": v, "x-retry": int64(3)}, r)
		s, _ := h["x-note"].(string)
		return s, n
	}},
}

func TestCorpusRecall(t *testing.T) {
	secrets := corpusSecrets(corpusGen{rand.New(rand.NewPCG(13, 2026))})
	r := New()
	t.Run(fmt.Sprintf("%d secrets x %d plantings", len(secrets), len(plantings)), func(t *testing.T) {
		t.Logf("corpus: %d secrets, each planted %d ways", len(secrets), len(plantings))
		missed := 0
		for _, p := range plantings {
			for _, s := range secrets {
				got, n := p.render(r, s.planted)
				for _, h := range s.hidden {
					// A header is one line: compare with the planted text's line breaks shown.
					if strings.Contains(got, h) || strings.Contains(got, strings.ReplaceAll(h, "\n", `\n`)) {
						missed++
						t.Errorf("%s: %q readable in %q", p.name, h, got)
					}
				}
				if !strings.Contains(got, "[REDACTED"+kindSuffix(s.kind)) || n == 0 {
					t.Errorf("%s: %q masked as %q (%d), want a %s mask", p.name, s.planted, got, n, s.kind)
				}
			}
		}
		if missed > 0 {
			t.Errorf("recall %d/%d", len(secrets)*len(plantings)-missed, len(secrets)*len(plantings))
		}
	})
}

func TestCorpusLookalikesStayReadable(t *testing.T) {
	looks := corpusLookalikes(corpusGen{rand.New(rand.NewPCG(13, 2026))})
	r := New()
	t.Run(fmt.Sprintf("%d look-alikes x %d plantings", len(looks), len(plantings)), func(t *testing.T) {
		t.Logf("corpus: %d look-alikes, each planted %d ways", len(looks), len(plantings))
		for _, p := range plantings {
			for _, v := range looks {
				if got, n := p.render(r, v); got != v || n != 0 {
					t.Errorf("%s: %q shown as %q (%d redactions)", p.name, v, got, n)
				}
			}
		}
		// Nine-digit ids and epochs as JSON numbers under innocuous keys.
		for _, v := range looks {
			if !isDigits(v) {
				continue
			}
			doc := `{"order_id":` + strings.TrimLeft(v, "0") + `1}`
			if got, n, _, _ := r.JSON([]byte(doc), 0); n != 0 {
				t.Errorf("JSON number %s masked: %s", doc, got)
			}
		}
	})
}

func kindSuffix(kind string) string {
	if kind == "" {
		return "]"
	}
	return ":" + kind
}

// An AWS secret access key planted under a key that says nothing (data,
// note, x-debug) with no key id near it is masked in JSON, headers and
// key=value text alike.
func TestLooseSecretUnderInnocuousKeys(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	r := New()
	for _, key := range []string{"data", "note", "x-debug"} {
		doc, _ := json.Marshal(map[string]string{key: secret})
		js, n, _, err := r.JSON(doc, 0)
		if err != nil || strings.Contains(js, secret) || n != 1 {
			t.Errorf("JSON %s: %s (%d, %v)", doc, js, n, err)
		}
		h, hn := Headers(headers{key: secret}, r)
		if h[key] != "[REDACTED:secret]" || hn != 1 {
			t.Errorf("header %s: %v (%d)", key, h[key], hn)
		}
		if txt, tn := r.Text(key + "=" + secret + " retry=3"); txt != key+"=[REDACTED:secret] retry=3" || tn != 1 {
			t.Errorf("text: %q (%d)", txt, tn)
		}
	}
}

// The loose-token rule's recall on random tokens of the AWS secret's
// length, which its threshold was measured on (minRandomness).
func TestLooseTokenRecall(t *testing.T) {
	g := corpusGen{rand.New(rand.NewPCG(7, 40))}
	missed := 0
	for range 20000 {
		if s := g.mixed(corpusAlphanum+"+/", 40); !looksRandom(s) {
			missed++
		}
	}
	if missed > 1 {
		t.Errorf("%d of 20000 random 40-character tokens not taken for secrets", missed)
	}
}
