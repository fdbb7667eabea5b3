package filter

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dlqt/dlqt/internal/triage/redact"
)

// TenantKeys are the keys tenant= looks for when no filters.tenant_path is
// configured, in this order: the names systems commonly give a tenant.
var TenantKeys = []string{"tenant", "tenant_id", "tenantId", "customer_id", "account_id", "org_id"}

// tenantSource is one place a tenant is detected at: a path in the
// (redacted) payload, or a header.
type tenantSource struct {
	where string // "envelope", "payload" or "header"
	key   string // the key, or the path for the payload
	path  redact.JSONPath
}

func (s tenantSource) String() string { return s.where + " " + s.key }

// tenantSources are the detection's places, most specific first: the
// envelope's own keys, its data or payload object, then the headers.
var tenantSources = func() []tenantSource {
	var out []tenantSource
	for _, prefix := range []struct{ where, path string }{{"envelope", ""}, {"payload", "data."}, {"payload", "payload."}} {
		for _, k := range TenantKeys {
			p, err := redact.ParseJSONPath(prefix.path + k)
			if err != nil {
				panic(err) // the keys are constants
			}
			out = append(out, tenantSource{where: prefix.where, key: prefix.path + k, path: p})
		}
	}
	for _, k := range TenantKeys {
		out = append(out, tenantSource{where: "header", key: k})
	}
	return out
}()

// tenantUse counts which detected source each matched message's tenant
// came from, so the user can be told which key was used. It is shared by
// the copies of a Filter.
type tenantUse struct {
	mu   sync.Mutex
	used map[string]int
}

func (u *tenantUse) add(source string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.used == nil {
		u.used = map[string]int{}
	}
	u.used[source]++
}

// TenantNote says where tenant= found tenants when it detected them (no
// filters.tenant_path), e.g. "tenant read from envelope tenant_id (12
// messages)"; "" when no tenant was detected or a path is configured.
func (f Filter) TenantNote() string {
	if f.detected == nil {
		return ""
	}
	f.detected.mu.Lock()
	defer f.detected.mu.Unlock()
	if len(f.detected.used) == 0 {
		return fmt.Sprintf("tenant: none of %s found (set filters.tenant_path to name the tenant's JSON path)", strings.Join(TenantKeys, ", "))
	}
	keys := make([]string, 0, len(f.detected.used))
	for k := range f.detected.used {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d message(s))", k, f.detected.used[k])
	}
	return "tenant read from " + strings.Join(parts, ", ") + "; filters.tenant_path names it for good"
}

// detectTenants reads the first of the tenant sources that holds a value,
// from the redacted payload, then the redacted headers.
func (in *matchInput) detectTenants() []string {
	e := in.searched()
	for _, s := range tenantSources {
		var vs []string
		if s.where == "header" {
			vs = in.headerValues(s.key)
		} else {
			vs = s.path.Values([]byte(e.payload))
		}
		if len(vs) > 0 {
			in.f.detected.add(s.String())
			return vs
		}
	}
	return nil
}

// headerValues is the redacted header key as text, none when absent.
func (in *matchInput) headerValues(key string) []string {
	v, ok := in.wholeMessage().Message.Headers[key]
	if !ok {
		return nil
	}
	h, _ := redact.Headers(map[string]any{key: v}, in.f.red)
	switch x := h[key].(type) {
	case string:
		return []string{x}
	case []byte:
		return []string{string(x)}
	case nil:
		return nil
	default:
		return []string{fmt.Sprint(x)}
	}
}
