package cli

import (
	"context"
	"fmt"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/doctor"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/ui"
)

// refuseWithoutPermission refuses command up front, before anything is
// touched, when the user lacks a permission feature needs in the vhost;
// the broker would refuse it halfway (ACCESS_REFUSED at the lease or the
// publish). What could not be checked is said on stderr and assumed fine.
func (a *app) refuseWithoutPermission(ctx context.Context, live *broker.Live, top triage.Topology, command, feature string) error {
	p := live.Permissions(ctx, top, a.patterns)
	for _, u := range p.Unchecked {
		fmt.Fprintln(a.stderr, "dlqt:", u)
	}
	if why := p.Denied(feature); why != "" {
		return fmt.Errorf("%s refused: %s; nothing was touched. %s", command, why, grantLine(p))
	}
	return nil
}

// refuseReplayWithoutPermission checks, before a replay touches anything,
// that the user may publish to every destination of plan, and with lease
// (a resume, which took no lease up front) also the lease and the watch.
func (a *app) refuseReplayWithoutPermission(ctx context.Context, plan replay.Plan, lease bool) error {
	live, err := a.dial(ctx)
	if err != nil {
		return err
	}
	defer live.Close()
	if lease {
		top, err := live.Topology(ctx)
		if err != nil {
			return err
		}
		if err := a.refuseWithoutPermission(ctx, live, top, "replay", broker.FeatureReplay); err != nil {
			return err
		}
	}
	return a.refuseUnwritableDestinations(ctx, live, plan, func(u string) { fmt.Fprintln(a.stderr, "dlqt:", u) })
}

// refuseUnwritableDestinations refuses plan when the user may not write
// to one of its destination exchanges; what could not be checked goes to
// say (nil: nowhere, as in the TUI, whose screen stderr would scribble on).
func (a *app) refuseUnwritableDestinations(ctx context.Context, live *broker.Live, plan replay.Plan, say func(string)) error {
	var exchanges []string
	for _, d := range plan.Destinations {
		exchanges = append(exchanges, d.Route.Exchange)
	}
	p := live.PublishPermissions(ctx, exchanges)
	for _, u := range p.Unchecked {
		if say != nil {
			say(u)
		}
	}
	if len(p.Gaps) > 0 {
		return fmt.Errorf("replay refused: %s; nothing was touched. %s", p.Sentence(p.Gaps[0]), grantLine(p))
	}
	return nil
}

// permissionFindings are doctor's findings of the user's permissions: one
// per missing permission, with the rabbitmqctl line that grants them all,
// and one per thing that could not be checked.
func permissionFindings(p broker.Permissions) []doctor.Finding {
	var fs []doctor.Finding
	for _, g := range p.Gaps {
		f := doctor.Finding{Kind: "permission-missing", Severity: doctor.SeverityWarning,
			Detail: p.Sentence(g) + ": it stops " + joinStops(g.Stops) + ".",
			Fix:    grantLine(p)}
		if g.Kind == "queue" {
			f.Queue = g.Name
		} else {
			f.Exchange = g.Name
		}
		fs = append(fs, f)
	}
	for _, u := range p.Unchecked {
		fs = append(fs, doctor.Finding{Kind: "permissions-unchecked", Severity: doctor.SeverityAdvisory,
			Detail: u + ". Nothing is assumed: an action the user may not take is refused by the broker when it starts.",
			Fix:    "See the README's \"Permissions dlqt needs\" for what each feature needs."})
	}
	return fs
}

// grantLine is the fix of every gap: the caveat first, the command last,
// so it is shown whole on a line of its own.
func grantLine(p broker.Permissions) string {
	if c := p.FixCaveat(); c != "" {
		return "Grant what is missing (" + c + "): " + p.Fix()
	}
	return "Grant what is missing: " + p.Fix()
}

func joinStops(stops []string) string {
	switch len(stops) {
	case 0:
		return "nothing dlqt does"
	case 1:
		return stops[0]
	}
	s := stops[0]
	for _, x := range stops[1 : len(stops)-1] {
		s += ", " + x
	}
	return s + " and " + stops[len(stops)-1]
}

// tuiAccess is what the TUI asks once it shows its first screen: which of
// discard and replay the user's permissions rule out, and why.
func (a *app) tuiAccess(live *broker.Live) func(ctx context.Context) ui.Access {
	return func(ctx context.Context) ui.Access {
		var acc ui.Access
		if a.trail != nil {
			if err := a.trail.probe(ctx); err != nil {
				acc.Trail = err.Error()
			}
		}
		top, err := live.Topology(ctx)
		if err != nil {
			acc.Note = "could not check permissions: " + err.Error()
			return acc
		}
		p := live.Permissions(ctx, top, a.patterns)
		acc.Discard, acc.Replay = p.Denied(broker.FeatureDiscard), p.Denied(broker.FeatureReplay)
		if acc.Discard != "" || acc.Replay != "" {
			acc.Fix = p.Fix()
			if p.FixCaveat() != "" {
				acc.Fix += " (merged with what the user has: it replaces the three regexes)"
			}
		}
		if len(p.Unchecked) > 0 {
			acc.Note = p.Unchecked[0]
		}
		return acc
	}
}
