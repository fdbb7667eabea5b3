package cli

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// --observe 0s used to become the 30 s default without a word (Options
// read zero as "unset"). It is refused, as the TUI's observe field refuses
// it: a canary nobody watches checks nothing, since a copy that fails
// again comes back after its publish.
func TestObserveZeroIsRefused(t *testing.T) {
	f := replayFlags{rate: 10, canary: 1, canaryRate: 1, observe: 0}
	_, err := f.options(nil)
	var usage usageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--observe") {
		t.Fatalf("--observe 0s: err %v, want a usage error that names --observe", err)
	}
	f.observe = 1
	if _, err := f.options(nil); err != nil {
		t.Fatalf("--observe 1ns: %v", err)
	}
}

// --canary-rate paces the canary (Options.CanaryRate had no flag: every
// canary went at 1 msg/s). It must be positive; the plan caps it at --rate.
func TestCanaryRateIsAFlagAndMustBePositive(t *testing.T) {
	for _, tc := range []struct {
		rate, canaryRate float64
		refused          bool
		want             float64 // the plan's canary rate
	}{
		{rate: 10, canaryRate: 0, refused: true},
		{rate: 10, canaryRate: -1, refused: true},
		{rate: 10, canaryRate: math.NaN(), refused: true}, // pflag parses "NaN"; it passed "<= 0"
		{rate: 10, canaryRate: math.Inf(1), refused: true},
		{rate: 10, canaryRate: 5, want: 5},
		{rate: 2, canaryRate: 5, want: 2}, // capped by the ceiling
		{rate: 10, canaryRate: replay.DefaultCanaryRate, want: 1},
	} {
		f := replayFlags{rate: tc.rate, canary: 5, canaryRate: tc.canaryRate, observe: time.Second}
		o, err := f.options([]string{":work"})
		var usage usageError
		if tc.refused {
			if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--canary-rate") {
				t.Errorf("--canary-rate %g: err %v, want a usage error that names --canary-rate", tc.canaryRate, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("--canary-rate %g: %v", tc.canaryRate, err)
		}
		to := triage.Route{RoutingKey: "work"}
		o.To = &to
		p, err := replay.NewSelectingPlan("v", "parked", triage.Selection{Group: &triage.GroupKey{Reason: triage.ReasonPublished, AnyCode: true}}, o, triage.Topology{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Options.CanaryRate; got != tc.want {
			t.Errorf("--rate %g --canary-rate %g: the plan's canary goes at %g msg/s, want %g", tc.rate, tc.canaryRate, got, tc.want)
		}
	}
}

// A proposal binds the canary's rate, and dlqt run carries it out as
// proposed; a proposal made before the field existed runs at the default.
func TestAProposalKeepsItsCanaryRate(t *testing.T) {
	f := replayFlags{rate: 100, canary: 5, canaryRate: 20, observe: time.Second, yes: true}
	got, err := replayFlagsOf(approval.Proposal{ID: "p1", Plan: f.approvalPlan(triage.Selection{})})
	if err != nil {
		t.Fatal(err)
	}
	if got.canaryRate != 20 || got.canary != 5 || got.rate != 100 || got.observe != time.Second {
		t.Errorf("run of the proposal: canary %d at %g msg/s, rate %g, observe %s; want 5 at 20, 100, 1s", got.canary, got.canaryRate, got.rate, got.observe)
	}
	old, err := replayFlagsOf(approval.Proposal{ID: "p0", Plan: approval.Plan{Rate: 10, Canary: 5, Observe: "30s"}})
	if err != nil {
		t.Fatal(err)
	}
	if old.canaryRate != replay.DefaultCanaryRate {
		t.Errorf("a proposal without canary_rate runs its canary at %g msg/s, want the default %g", old.canaryRate, replay.DefaultCanaryRate)
	}
	if _, err := old.options(nil); err != nil {
		t.Errorf("a proposal without canary_rate: %v", err)
	}
}

// --rate NaN passed its "<= 0" check (pflag parses "NaN" and "Inf"): a
// rate must be a finite number above zero.
func TestRateMustBeAFiniteNumber(t *testing.T) {
	for _, r := range []float64{0, -5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		f := replayFlags{rate: r, canary: 5, canaryRate: 1, observe: time.Second}
		_, err := f.options(nil)
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--rate") {
			t.Errorf("--rate %g: err %v, want a usage error that names --rate", r, err)
		}
	}
}
