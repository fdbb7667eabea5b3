package replay

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/dlqt/dlqt/internal/triage"
)

// An ordered replay (--order-by PATH --in-order) keeps the order of each
// aggregate: its messages go one at a time, oldest death first, the next
// only once the previous copy was confirmed and not seen failing again
// within the observation window. An aggregate whose message fails again
// stops there (the rest of it stays parked); the others go on. Messages of
// different aggregates travel side by side, one per aggregate per wave.

// Aggregate is the messages of one aggregate, in their original order.
type Aggregate struct {
	Key string   `json:"key"`
	IDs []string `json:"ids"`
}

// AggregateKey is the value at path in the message: a dot path into the
// JSON payload (order_id, data.order.id), or headers.NAME for a header.
// ok is false when the message has none.
func AggregateKey(t triage.Triaged, path string) (string, bool) {
	if t.Indexed() && t.Message.Body == nil { // an index entry: the key is in the message on disk
		w, err := t.WithMessage()
		if err != nil {
			return "", false
		}
		t = w
	}
	if name, ok := strings.CutPrefix(path, "headers."); ok {
		v, found := t.Message.Headers[name]
		if !found {
			return "", false
		}
		return fmt.Sprint(v), true
	}
	body, _ := triage.DecodeBody(t.Message.Body, t.Message.Properties.ContentEncoding)
	if !json.Valid(body) {
		return "", false
	}
	r := gjson.GetBytes(body, strings.TrimPrefix(strings.TrimPrefix(path, "$"), "."))
	if !r.Exists() || r.Type == gjson.Null {
		return "", false
	}
	return r.String(), true
}

// Aggregates orders msgs by death time, then queue position, and splits
// them by their key at path, aggregates in the order of their first
// message; keyless lists the messages that have no key.
func Aggregates(msgs []triage.Triaged, path string) (aggs []Aggregate, keyless []string) {
	ordered := slices.Clone(msgs)
	slices.SortStableFunc(ordered, func(a, b triage.Triaged) int {
		if c := a.DiedAt.Compare(b.DiedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Message.Position, b.Message.Position)
	})
	at := map[string]int{}
	for _, t := range ordered {
		key, ok := AggregateKey(t, path)
		if !ok {
			keyless = append(keyless, t.ID)
			continue
		}
		i, seen := at[key]
		if !seen {
			i = len(aggs)
			at[key] = i
			aggs = append(aggs, Aggregate{Key: key})
		}
		aggs[i].IDs = append(aggs[i].IDs, t.ID)
	}
	return aggs, keyless
}

// AggregateResult is how one aggregate ended: the ids replayed in order,
// and where it stopped and why when it did.
type AggregateResult struct {
	Key       string   `json:"key"`
	Replayed  []string `json:"replayed"`
	StoppedAt string   `json:"stopped_at,omitempty"`
	Why       string   `json:"why,omitempty"`
	Left      []string `json:"left,omitempty"` // still parked, never published
}

// Wave replays ids (at most one per aggregate) and reports each one's
// outcome once the copies were confirmed and observed.
type Wave func(ctx context.Context, ids []string) (map[string]Outcome, error)

// RunInOrder replays aggs wave by wave: each wave holds the next message of
// every aggregate still going. A message that does not resolve (failed
// again, returned, unacked, untouched) stops its aggregate.
func RunInOrder(ctx context.Context, aggs []Aggregate, wave Wave) ([]AggregateResult, error) {
	res := make([]AggregateResult, len(aggs))
	next := make([]int, len(aggs))
	for i, a := range aggs {
		res[i].Key = a.Key
	}
	for {
		var ids []string
		var who []int
		for i, a := range aggs {
			if res[i].StoppedAt == "" && next[i] < len(a.IDs) {
				ids, who = append(ids, a.IDs[next[i]]), append(who, i)
			}
		}
		if len(ids) == 0 {
			return res, nil
		}
		outcomes, err := wave(ctx, ids)
		for k, i := range who {
			id := ids[k]
			switch o := outcomes[id]; o {
			case OutcomeResolved:
				res[i].Replayed = append(res[i].Replayed, id)
				next[i]++
			default:
				if o == "" {
					o = OutcomeUntouched
				}
				res[i].StoppedAt, res[i].Why = id, string(o)
				res[i].Left = slices.Clone(aggs[i].IDs[next[i]+1:])
			}
		}
		if err != nil {
			return res, err
		}
	}
}

// Subset is the plan of ids alone, under a new replay id, as one wave of
// an ordered replay: all of it goes as the canary, at the plan's rate, and
// is observed for the plan's window before the replay ends.
func (p Plan) Subset(ids []string, now time.Time) Plan {
	q := p
	q.ID = NewID(now)
	q.Items = Items{}
	for _, it := range p.Items.All() {
		if slices.Contains(ids, it.ID) {
			q.Items.Append(it)
		}
	}
	q.Selection = triage.Selection{IDs: ids}
	q.Missing, q.Sample = nil, nil
	q.Options.Canary = max(q.Items.Len(), 1)
	q.Options.CanaryRate = q.Options.Rate
	q.Options.AutoRamp = true
	return q
}
