package broker_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker"
	"github.com/dlqt/dlqt/internal/broker/brokertest/privnode"
	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/redact"
	"github.com/dlqt/dlqt/internal/triage/replay"
)

// A replay whose connections drop while publishes await their confirm must
// end on its own, say why, and lose nothing: every id is still in the
// parking queue or at the destination (a copy confirmed but its source not
// acked is a duplicate, reported here).
func TestReplayEndsWhenTheBrokerDropsItsConnections(t *testing.T) {
	n := privnode.Start(t)
	for _, fault := range []struct {
		name string
		do   func()
	}{
		{"connections closed through the management API", func() { n.CloseAllConnections() }},
		{"stop_app then start_app", func() { n.Restart() }},
		// The alarm holds the confirms back, so publishes are surely in
		// flight when the connections close.
		{"memory alarm, then connections closed", func() {
			n.SetMemoryAlarm()
			defer n.ClearMemoryAlarm()
			time.Sleep(500 * time.Millisecond)
			n.CloseAllConnections()
		}},
	} {
		t.Run(fault.name, func(t *testing.T) {
			f := fixtureOn(t, n.NewVhost("drop"))
			replayThroughFault(t, f, n, time.Second, fault.do)
		})
	}
}

// replayThroughFault parks 3,000 messages, replays them all at a high rate
// and strikes with fault after the given delay.
func replayThroughFault(t *testing.T, f *fixture, n *privnode.Node, after time.Duration, fault func()) {
	t.Helper()
	ctx := context.Background()
	if err := f.ch.ExchangeDeclare("ledger", "direct", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.declare("ledger.entries", nil)
	if err := f.ch.QueueBind("ledger.entries", "entry.posted", "ledger", false, nil); err != nil {
		t.Fatal(err)
	}
	all := parkMany(t, f, "ledger", "entry.posted", 3000)
	live, err := broker.Dial(ctx, f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	in, err := triage.Inspect(ctx, live, "parked", triage.BrowseOptions{Limit: 5000}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	// 150/s keeps the run going for 20 s: stop_app can take seconds to close
	// the connections of a busy node, and the fault must land mid-run.
	plan, err := replay.NewPlan(in, triage.Selection{IDs: all}, replay.Options{
		Rate: 150, Canary: 20, CanaryRate: 150, Observe: 100 * time.Millisecond, AutoRamp: true, ConfirmTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	port, err := live.OpenReplay(ctx, plan.ID, "parked")
	if err != nil {
		t.Fatal(err)
	}
	port.HoldLimit = 5000
	defer port.Close()
	j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()

	type outcome struct {
		res replay.Result
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
		done <- outcome{res, err}
	}()
	n.WaitConnections(4) // the fixture's, the browse's, the replay's two
	time.Sleep(after)
	fault()
	var got outcome
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the replay still runs %s after the fault: hung", time.Since(start).Round(time.Second))
	}
	t.Logf("replay ended %.1f s after it began: err %v, stopped because %q; %d published, %d resolved, %d returned, %d untouched",
		time.Since(start).Seconds(), got.err, got.res.StoppedBecause, got.res.Published, got.res.Resolved, got.res.Returned, got.res.Untouched)
	if got.err == nil && got.res.StoppedBecause == "" {
		t.Error("the replay lost its connection but reported neither an error nor a stop")
	}
	port.Close()
	confirmed := resumeAfterFault(t, f, j, plan.ID, len(all))
	src, _ := checkNothingLost(t, fixtureOn(t, f.cfg), all, "parked", "ledger.entries")
	var parkedAgain []string
	for _, id := range confirmed {
		if slices.Contains(src, id) {
			parkedAgain = append(parkedAgain, id)
		}
	}
	if len(parkedAgain) > 0 {
		t.Errorf("%d sources whose copies were confirmed before the fault are still parked after the resume (delivered twice): %v",
			len(parkedAgain), parkedAgain[:min(len(parkedAgain), 10)])
	}
}

// resumeAfterFault resumes the replay when the journal says it was
// interrupted, as `dlqt replay --resume` does, once the requeues of the
// fault have landed; it returns the ids the journal had as confirmed (their
// sources must be acked by the resume, never published again).
func resumeAfterFault(t *testing.T, f *fixture, j *journal.Journal, replayID string, total int) []string {
	t.Helper()
	ctx := context.Background()
	g := fixtureOn(t, f.cfg)
	eventually(t, "requeued messages back", func() string {
		if g.depth("parked")+g.depth("ledger.entries") < total {
			return "fewer messages than ids"
		}
		return ""
	})
	st, err := replay.Find(j, replayID)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Interrupted() {
		t.Logf("the replay ended (%s): nothing to resume", st.Status)
		return nil
	}
	plan := st.ResumePlan()
	plan.Options.AutoRamp = true
	live, err := broker.Dial(ctx, f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	port, err := live.OpenReplay(ctx, plan.ID, "parked")
	if err != nil {
		t.Fatal(err)
	}
	port.HoldLimit = 5000
	defer port.Close()
	res, err := replay.Run(ctx, plan, port, journal.NewRecorder(j, "test", "host"), nil, nil)
	t.Logf("resume: err %v, stopped because %q; %d confirmed before, %d published, %d resolved, %d gone",
		err, res.StoppedBecause, len(plan.Prior.Confirmed), res.Published, res.Resolved, len(res.Gone))
	if err != nil {
		t.Fatalf("the resume failed: %v", err)
	}
	if after, err := replay.Find(j, replayID); err != nil || after.Interrupted() {
		t.Errorf("after the resume the replay is still interrupted (%v)", err)
	}
	return plan.Prior.Confirmed
}

// parkMany is parkPublished for thousands: one confirm wait at the end.
func parkMany(t *testing.T, f *fixture, exchange, key string, n int) []string {
	t.Helper()
	f.declare("parked", nil)
	ids := make([]string, n)
	var last *amqp.DeferredConfirmation
	for i := range n {
		p := testMessage(i, []byte(`{"n":1}`))
		p.Headers["x-original-exchange"] = exchange
		p.Headers["x-original-routingKey"] = key
		dc, err := f.ch.PublishWithDeferredConfirmWithContext(context.Background(), "", "parked", false, false, p)
		if err != nil {
			t.Fatal(err)
		}
		ids[i], last = p.MessageId, dc
	}
	if !last.Wait() {
		t.Fatal("the broker nacked a parked message")
	}
	return ids
}

// checkNothingLost reads every message of the source and destination
// queues and fails if an id of want is in neither; ids in both are
// duplicates, logged.
func checkNothingLost(t *testing.T, f *fixture, want []string, source, dest string) (src, dst []string) {
	t.Helper()
	eventually(t, "requeued messages back in "+source, func() string {
		// Requeues after a connection loss land asynchronously.
		if f.depth(source)+f.depth(dest) < len(want) {
			return "fewer messages than ids"
		}
		return ""
	})
	src, dst = ids(f.drain(source)), ids(f.drain(dest))
	var lost, dup []string
	for _, id := range want {
		in, out := slices.Contains(src, id), slices.Contains(dst, id)
		if !in && !out {
			lost = append(lost, id)
		}
		if in && out {
			dup = append(dup, id)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d messages lost: %v", len(lost), lost[:min(len(lost), 10)])
	}
	t.Logf("%d in %s, %d in %s, %d duplicates", len(src), source, len(dst), dest, len(dup))
	return src, dst
}
