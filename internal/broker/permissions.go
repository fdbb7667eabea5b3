package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// The features a permission gap can stop, as Permissions.Denied names them.
const (
	FeatureDiscard  = "discard"
	FeatureReplay   = "replay"
	FeatureFullScan = "fullscan"
	FeatureBrowse   = "browse"
)

// Permission kinds, RabbitMQ's words.
const (
	PermConfigure = "configure"
	PermWrite     = "write"
	PermRead      = "read"
)

// triedWhy is how a gap found by trying says so.
const triedWhy = "tried: the broker answered ACCESS_REFUSED"

// maxWriteChecks bounds how many destination exchanges are tried: each is
// a channel and a publish rolled back.
const maxWriteChecks = 32

// VhostPermissions are a user's three regexes in one vhost.
type VhostPermissions struct {
	Configure string `json:"configure"`
	Write     string `json:"write"`
	Read      string `json:"read"`
}

func (p VhostPermissions) of(perm string) string {
	switch perm {
	case PermConfigure:
		return p.Configure
	case PermWrite:
		return p.Write
	}
	return p.Read
}

// PermissionGap is one permission the user lacks and what it stops.
type PermissionGap struct {
	Permission string   `json:"permission"` // configure, write or read
	Kind       string   `json:"kind"`       // queue or exchange
	Name       string   `json:"name"`       // the resource; "" for the lease queues as a whole
	Shown      string   `json:"shown"`      // the resource as a sentence names it
	Stops      []string `json:"stops"`      // the features it stops: discard, replay, fullscan, browse
	Why        string   `json:"why"`        // the regex that does not match, or the broker's refusal
	Need       string   `json:"need"`       // the regex to add to the permission
}

// Permissions is what the current user may do in the vhost, as far as
// dlqt could tell before acting.
//
// On 3.10 and 4.3 only an administrator may read /api/permissions (a
// monitoring or management user gets 401 "Not administrator user"). So an
// administrator's regexes are read and matched; for everyone else each
// permission is tried on the broker with a change that leaves nothing
// behind: an exclusive lease-named queue declared and deleted, a
// server-named queue declared, bound and consumed as a replay's watch
// does, and a publish on a transaction that is rolled back (the broker
// checks write access at the publish; nothing is routed before a commit).
type Permissions struct {
	User  string   `json:"user"`
	Vhost string   `json:"vhost"`
	Tags  []string `json:"tags"`
	// Regexes are the user's permissions when the management API showed
	// them; nil when they were tried on the broker instead.
	Regexes *VhostPermissions `json:"regexes,omitempty"`
	Gaps    []PermissionGap   `json:"gaps"`
	// Unchecked says what could not be checked, and why; nothing is
	// assumed of it.
	Unchecked []string `json:"unchecked,omitempty"`
}

// Denied is why the user cannot use feature, "" when nothing dlqt found
// stops it: the first gap that stops it, as one sentence.
func (p Permissions) Denied(feature string) string {
	for _, g := range p.Gaps {
		if slices.Contains(g.Stops, feature) {
			return p.Sentence(g)
		}
	}
	return ""
}

// Sentence says a gap: who lacks which permission on what, where, and how
// dlqt knows. Names come from the broker: made fit for a terminal.
func (p Permissions) Sentence(g PermissionGap) string {
	return sanitize.Line(fmt.Sprintf("user %s has no %s permission on %s in vhost %s (%s)", p.User, g.Permission, g.Shown, p.Vhost, g.Why))
}

// Fix is the rabbitmqctl line that grants every gap: each regex with a gap
// gets the missing names added, the others stay. When the regexes could
// not be read, it names only what dlqt needs, so say that it replaces.
func (p Permissions) Fix() string {
	need := map[string][]string{}
	for _, g := range p.Gaps {
		if !slices.Contains(need[g.Permission], g.Need) {
			need[g.Permission] = append(need[g.Permission], g.Need)
		}
	}
	// without the user's regexes, start from what dlqt needs besides
	baseline := map[string][]string{PermConfigure: {leaseNeed, watchNeed}, PermWrite: {watchNeed, `^amq\.default$`}, PermRead: {".*"}}
	var args []string
	for _, perm := range []string{PermConfigure, PermWrite, PermRead} {
		var parts []string
		if p.Regexes == nil {
			parts = slices.Clone(baseline[perm])
		} else if old := p.Regexes.of(perm); old != "" && old != "^$" {
			parts = append(parts, old)
		}
		for _, n := range need[perm] {
			if !slices.Contains(parts, n) && !slices.Contains(parts, ".*") {
				parts = append(parts, n)
			}
		}
		if len(parts) == 0 {
			parts = []string{"^$"}
		}
		args = append(args, shellQuote(strings.Join(parts, "|")))
	}
	return sanitize.Line(fmt.Sprintf("rabbitmqctl set_permissions -p %s %s %s", shellQuote(p.Vhost), shellQuote(p.User), strings.Join(args, " ")))
}

// FixCaveat is what to know before running Fix: without the user's
// regexes (only administrators may read them) the line names only what
// dlqt needs, and set_permissions replaces all three.
func (p Permissions) FixCaveat() string {
	if p.Regexes != nil {
		return ""
	}
	return "dlqt could not read the user's regexes, and set_permissions replaces them: merge in what the user needs besides dlqt"
}

// shellQuote single-quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/@:+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// needs lists what dlqt's features need in a topology.
type needs struct {
	lease    bool             // discard and replay take a lease
	fullscan bool             // a full scan republishes through the default exchange
	leases   []string         // lease queue names (one per parking queue)
	parking  []string         // parking queues: read
	watch    []triage.Binding // a replay's watch binds a server-named queue like these
	dests    []string         // exchanges a replay publishes back to
}

func needsOf(top triage.Topology, patterns []string) needs {
	n := needs{lease: true, fullscan: true}
	parking := triage.FindParkingQueues(top, patterns)
	isParking := map[string]bool{}
	sources := map[string]bool{}
	for _, p := range parking {
		isParking[p.Name] = true
		n.parking = append(n.parking, p.Name)
		n.leases = append(n.leases, leaseName(p.Name))
		for _, s := range p.DeadLetteredFrom {
			sources[s] = true
		}
	}
	type bind struct{ source, key, args string }
	seen := map[bind]bool{}
	dests := map[string]bool{}
	reached := map[string]bool{}
	for _, b := range top.Bindings {
		if b.Source == "" || b.DestinationType != "queue" {
			continue
		}
		if isParking[b.Destination] {
			k := bind{b.Source, b.RoutingKey, fmt.Sprint(b.Arguments)}
			if !seen[k] {
				seen[k] = true
				n.watch = append(n.watch, b)
			}
		}
		if sources[b.Destination] {
			dests[b.Source], reached[b.Destination] = true, true
		}
	}
	for s := range sources {
		if !reached[s] {
			dests[""] = true // reached only by name: its messages came through the default exchange
		}
	}
	for d := range dests {
		n.dests = append(n.dests, d)
	}
	sort.Strings(n.dests)
	return n
}

// exchangeResource is the name RabbitMQ checks an exchange's permission
// against: the default exchange is amq.default.
func exchangeResource(name string) string {
	if name == "" {
		return "amq.default"
	}
	return name
}

// Permissions checks what the current user may do in the vhost of top
// (parking queues found with patterns). It never fails: what it cannot
// check is in Unchecked, and nothing is assumed of it.
func (l *Live) Permissions(ctx context.Context, top triage.Topology, patterns []string) Permissions {
	return l.permissions(ctx, needsOf(top, patterns))
}

// PublishPermissions checks only the write permission on exchanges, the
// destinations of a replay's plan; when none may be written to,
// Denied(FeatureReplay) says why.
func (l *Live) PublishPermissions(ctx context.Context, exchanges []string) Permissions {
	var n needs
	for _, x := range exchanges {
		if !slices.Contains(n.dests, x) {
			n.dests = append(n.dests, x)
		}
	}
	sort.Strings(n.dests)
	return l.permissions(ctx, n)
}

func (l *Live) permissions(ctx context.Context, n needs) Permissions {
	p := Permissions{User: l.mgmt.user, Vhost: l.cfg.Vhost}
	var who struct {
		Name string          `json:"name"`
		Tags json.RawMessage `json:"tags"`
	}
	if err := l.mgmt.get(ctx, "whoami", &who); err != nil {
		p.Unchecked = append(p.Unchecked, "could not check permissions: "+err.Error())
		return p
	}
	p.User, p.Tags = who.Name, tagList(who.Tags)
	var perms VhostPermissions
	err := l.mgmt.get(ctx, "permissions/"+url.PathEscape(l.cfg.Vhost)+"/"+url.PathEscape(p.User), &perms)
	switch {
	case err == nil:
		p.Regexes = &perms
		p.matchRegexes(n)
		l.noteTopicPermissions(ctx, &p, n.dests)
	case errors.Is(err, errHTTPNotFound):
		p.Regexes = &VhostPermissions{} // no permissions in the vhost at all
		p.matchRegexes(n)
	case strings.Contains(err.Error(), "not an administrator"):
		l.tryPermissions(ctx, &p, n)
	default:
		p.Unchecked = append(p.Unchecked, "could not check permissions: "+err.Error())
	}
	return p
}

// noteTopicPermissions says which destination exchanges have topic
// permissions: they judge a publish's routing key, which only the replay
// knows, so the broker judges them at the publish.
func (l *Live) noteTopicPermissions(ctx context.Context, p *Permissions, dests []string) {
	var tps []struct {
		Exchange string `json:"exchange"`
	}
	if err := l.mgmt.get(ctx, "topic-permissions/"+url.PathEscape(l.cfg.Vhost)+"/"+url.PathEscape(p.User), &tps); err != nil {
		if !errors.Is(err, errHTTPNotFound) {
			p.Unchecked = append(p.Unchecked, "could not read the user's topic permissions: "+err.Error())
		}
		return
	}
	for _, tp := range tps {
		if slices.Contains(dests, tp.Exchange) {
			p.Unchecked = append(p.Unchecked, fmt.Sprintf("could not check the write permission on exchange %s: topic permissions limit its routing keys, and the broker judges a replay's own at the publish", tp.Exchange))
		}
	}
}

// tagList reads whoami's tags: a comma-separated string on old brokers, a
// list on newer ones.
func tagList(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			list = append(list, t)
		}
	}
	return list
}

// leaseNeed and watchNeed are what the README tells users to grant.
const (
	leaseNeed = `^dlqt\.lease\.`
	watchNeed = `^amq\.gen-`
)

func exactNeed(name string) string { return "^" + regexp.QuoteMeta(name) + "$" }

// matchRegexes matches the regexes read from the management API as the
// broker would: unanchored, an empty regex matching nothing. Go's RE2
// reads the common cases as Erlang's re (PCRE) does; a regex it cannot
// compile (a backreference, a lookaround) leaves that permission unchecked.
func (p *Permissions) matchRegexes(n needs) {
	compiled := map[string]*regexp.Regexp{}
	bad := map[string]bool{}
	allows := func(perm, name string) (ok, known bool) {
		if bad[perm] {
			return false, false
		}
		re, done := compiled[perm]
		if !done {
			src := p.Regexes.of(perm)
			if src == "" {
				src = "^$" // RabbitMQ's reading of an empty permission
			}
			var err error
			if re, err = regexp.Compile(src); err != nil {
				bad[perm] = true
				p.Unchecked = append(p.Unchecked, fmt.Sprintf("could not check the %s permission: its regex %q is not one Go's regexp reads (%v); the broker will judge it at the action", perm, src, err))
				return false, false
			}
			compiled[perm] = re
		}
		return re.MatchString(name), true
	}
	why := func(perm string) string { return fmt.Sprintf("its %s regex is %q", perm, p.Regexes.of(perm)) }
	for _, name := range n.leases {
		if ok, known := allows(PermConfigure, name); known && !ok {
			p.Gaps = append(p.Gaps, PermissionGap{Permission: PermConfigure, Kind: "queue", Name: name, Shown: "the lease queue " + name,
				Stops: []string{FeatureDiscard, FeatureReplay}, Why: why(PermConfigure), Need: leaseNeed})
		}
	}
	watchQueue := "amq.gen-dlqt"
	if len(n.watch) > 0 {
		for _, perm := range []string{PermConfigure, PermWrite, PermRead} {
			if ok, known := allows(perm, watchQueue); known && !ok {
				p.Gaps = append(p.Gaps, PermissionGap{Permission: perm, Kind: "queue", Name: watchQueue, Shown: "server-named queues amq.gen-* (a replay's watch for copies that fail again)",
					Stops: []string{FeatureReplay}, Why: why(perm), Need: watchNeed})
			}
		}
	}
	for _, x := range uniqueSources(n.watch) {
		if ok, known := allows(PermRead, exchangeResource(x)); known && !ok {
			p.Gaps = append(p.Gaps, PermissionGap{Permission: PermRead, Kind: "exchange", Name: x, Shown: "exchange " + exchangeResource(x) + " (a replay's watch binds to it)",
				Stops: []string{FeatureReplay}, Why: why(PermRead), Need: exactNeed(exchangeResource(x))})
		}
	}
	p.destGaps(n.dests, func(x string) (string, bool, bool) {
		ok, known := allows(PermWrite, exchangeResource(x))
		return why(PermWrite), ok, known
	})
	if ok, known := allows(PermWrite, "amq.default"); n.fullscan && known && !ok {
		p.Gaps = append(p.Gaps, PermissionGap{Permission: PermWrite, Kind: "exchange", Name: "", Shown: "exchange amq.default (a full scan republishes each message to its queue)",
			Stops: []string{FeatureFullScan}, Why: why(PermWrite), Need: `^amq\.default$`})
	}
	for _, q := range n.parking {
		if ok, known := allows(PermRead, q); known && !ok {
			p.Gaps = append(p.Gaps, PermissionGap{Permission: PermRead, Kind: "queue", Name: q, Shown: "parking queue " + q,
				Stops: []string{FeatureBrowse + " " + q}, Why: why(PermRead), Need: exactNeed(q)})
		}
	}
}

// destGaps adds a gap per destination exchange the user may not write to;
// when it may write to none of them, replay as a whole is stopped.
func (p *Permissions) destGaps(dests []string, allows func(x string) (why string, ok, known bool)) {
	denied, checked := 0, 0
	start := len(p.Gaps)
	for i, x := range dests {
		if i == maxWriteChecks {
			p.Unchecked = append(p.Unchecked, fmt.Sprintf("could not check the write permission on %d more destination exchange(s): the broker refuses a replay to one it denies", len(dests)-i))
			break
		}
		why, ok, known := allows(x)
		if !known {
			continue
		}
		checked++
		if !ok {
			denied++
			p.Gaps = append(p.Gaps, PermissionGap{Permission: PermWrite, Kind: "exchange", Name: x, Shown: "exchange " + exchangeResource(x) + " (a replay publishes back to it)",
				Stops: []string{FeatureReplay + " to " + exchangeResource(x)}, Why: why, Need: exactNeed(exchangeResource(x))})
		}
	}
	if checked > 0 && denied == checked { // no way back for any message
		for i := start; i < len(p.Gaps); i++ {
			p.Gaps[i].Stops = []string{FeatureReplay}
		}
	}
}

func uniqueSources(bs []triage.Binding) []string {
	var out []string
	for _, b := range bs {
		if !slices.Contains(out, b.Source) {
			out = append(out, b.Source)
		}
	}
	sort.Strings(out)
	return out
}

// tryPermissions finds the gaps by trying each permission on the broker,
// on a connection of its own, each try on a channel of its own (a refusal
// closes the channel). Nothing it does outlives the connection.
func (l *Live) tryPermissions(ctx context.Context, p *Permissions, n needs) {
	conn, err := l.dial(ctx, "dlqt permission check")
	if err != nil {
		p.Unchecked = append(p.Unchecked, "could not check permissions: "+err.Error())
		return
	}
	defer func() { _ = closeConn(conn) }()
	// try runs f on a channel of its own; refused is the broker's reason
	// when it answered ACCESS_REFUSED (never shown: it names the probe)
	try := func(f func(ch *amqp.Channel) error) (refused string, err error) {
		ch, err := conn.Channel()
		if err != nil {
			return "", err
		}
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		err = f(ch)
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.ChannelError && !ae.Server {
			// amqp091-go may answer a call with "channel/connection is not
			// open" when the broker's close raced it: the reason is the close's
			select {
			case e := <-closed:
				if e != nil {
					ae = e
				}
			case <-time.After(time.Second):
			}
		}
		if ae != nil && ae.Code == amqp.AccessRefused {
			return ae.Reason, nil
		}
		if err == nil {
			_ = ch.Close()
		}
		return "", err
	}
	unchecked := func(what string, err error) {
		p.Unchecked = append(p.Unchecked, fmt.Sprintf("could not check %s: %v", what, err))
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	probe := LeasePrefix + "~permission-check-" + hex.EncodeToString(b[:]) // the lease of no queue
	refused, err := "", error(nil)
	if n.lease {
		refused, err = try(func(ch *amqp.Channel) error {
			if _, err := ch.QueueDeclare(probe, false, true, true, false, nil); err != nil {
				return err
			}
			_, err := ch.QueueDelete(probe, false, false, false)
			return err
		})
	}
	switch {
	case err != nil:
		unchecked("the configure permission on the lease queues", err)
	case refused != "":
		p.Gaps = append(p.Gaps, PermissionGap{Permission: PermConfigure, Kind: "queue", Shown: "the lease queues dlqt.lease.*",
			Stops: []string{FeatureDiscard, FeatureReplay}, Why: triedWhy, Need: leaseNeed})
	}
	if len(n.watch) > 0 {
		l.tryWatch(p, n.watch, try, unchecked)
	}
	p.destGaps(n.dests, func(x string) (string, bool, bool) {
		refused, err := try(func(ch *amqp.Channel) error { return publishRolledBack(ch, x) })
		if err != nil {
			unchecked("the write permission on exchange "+exchangeResource(x), err)
			return "", false, false
		}
		if strings.Contains(refused, "topic") {
			// topic permissions judge the routing key, and the probe's is
			// not a replay's: the broker judges the real ones at the publish
			p.Unchecked = append(p.Unchecked, fmt.Sprintf("could not check the write permission on exchange %s: topic permissions limit its routing keys, and the broker judges a replay's own at the publish", x))
			return "", false, false
		}
		return triedWhy, refused == "", true
	})
	if !n.fullscan {
		return
	}
	refused, err = try(func(ch *amqp.Channel) error { return publishRolledBack(ch, "") })
	switch {
	case err != nil:
		unchecked("the write permission on exchange amq.default", err)
	case refused != "":
		p.Gaps = append(p.Gaps, PermissionGap{Permission: PermWrite, Kind: "exchange", Shown: "exchange amq.default (a full scan republishes each message to its queue)",
			Stops: []string{FeatureFullScan}, Why: triedWhy, Need: `^amq\.default$`})
	}
}

// tryWatch declares, binds and consumes a server-named queue as a
// replay's watch does; a refusal names the step.
func (l *Live) tryWatch(p *Permissions, binds []triage.Binding, try func(func(*amqp.Channel) error) (string, error), unchecked func(string, error)) {
	watchGap := func(perm string) {
		p.Gaps = append(p.Gaps, PermissionGap{Permission: perm, Kind: "queue", Name: "amq.gen-*", Shown: "server-named queues amq.gen-* (a replay's watch for copies that fail again)",
			Stops: []string{FeatureReplay}, Why: triedWhy, Need: watchNeed})
	}
	var q string
	refused, err := try(func(ch *amqp.Channel) error {
		d, err := ch.QueueDeclare("", false, true, true, false, nil)
		q = d.Name
		return err
	})
	switch {
	case err != nil:
		unchecked("the permissions of a replay's watch", err)
		return
	case refused != "":
		watchGap(PermConfigure)
		return
	}
	defer func() {
		_, _ = try(func(ch *amqp.Channel) error { _, err := ch.QueueDelete(q, false, false, false); return err })
	}()
	for _, b := range binds {
		refused, err := try(func(ch *amqp.Channel) error {
			return ch.QueueBind(q, b.RoutingKey, b.Source, false, headersToTable(b.Arguments))
		})
		switch {
		case err != nil:
			unchecked("the permissions of a replay's watch", err)
			return
		case strings.Contains(refused, "exchange '"):
			p.Gaps = append(p.Gaps, PermissionGap{Permission: PermRead, Kind: "exchange", Name: b.Source, Shown: "exchange " + b.Source + " (a replay's watch binds to it)",
				Stops: []string{FeatureReplay}, Why: triedWhy, Need: exactNeed(b.Source)})
		case refused != "":
			watchGap(PermWrite)
			return
		}
	}
	refused, err = try(func(ch *amqp.Channel) error {
		_, err := ch.Consume(q, "", true, true, false, false, nil)
		return err
	})
	switch {
	case err != nil:
		unchecked("the permissions of a replay's watch", err)
	case refused != "":
		watchGap(PermRead)
	}
}

// publishRolledBack publishes an empty message to exchange on a
// transaction and rolls it back: the broker checks the write permission at
// the publish and routes nothing before a commit.
func publishRolledBack(ch *amqp.Channel, exchange string) error {
	if err := ch.Tx(); err != nil {
		return err
	}
	if err := ch.Publish(exchange, "dlqt.permission-check", false, false, amqp.Publishing{Headers: amqp.Table{"dlqt-permission-check": true}}); err != nil {
		return err
	}
	return ch.TxRollback()
}
