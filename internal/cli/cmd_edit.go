package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/journal"
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/approval"
	"github.com/dlqt/dlqt/internal/triage/replay"
	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

func (a *app) editCommand() *cobra.Command {
	var (
		id, reason string
		sets       []string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "edit QUEUE --id ID --set PATH=VALUE ... --reason TEXT",
		Short: "Make a revision of a parked JSON message: the original stays untouched, a replay publishes the revision",
		Long: `edit never changes the queue. It reads message ID of QUEUE, sets each PATH
(a dot path: customer.address.zip, items.0.qty) to VALUE (JSON when it parses:
42, true, "10115", {"a":1}; else a string), and journals a revision: the fields
changed with their values redacted, the SHA-256 before and after, who and why.
The edited body is kept beside the journal's entries, where only a replay
reads it; no export shows it. A body that is not JSON, before or after, is
refused and nothing is stored.

dlqt replay of that id then publishes the latest approved revision with the
original message_id and the headers x-dlqt-revision and
x-dlqt-original-sha256, and acks the original only after the copy is
confirmed; a message parked again under that id with another body is left
as it is, since the revision was made from the old one. When the config's approvals section has edit, the revision is
also a proposal (exit 3) and counts once a second person approves it.`,
		Args: exactArgs(1, "one QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if id == "" || len(sets) == 0 || strings.TrimSpace(reason) == "" {
				return usageError{errors.New("edit needs --id ID, at least one --set PATH=VALUE and --reason TEXT")}
			}
			var parsed []approval.Set
			for _, s := range sets {
				p, err := approval.ParseSet(s)
				if err != nil {
					return usageError{err}
				}
				parsed = append(parsed, p)
			}
			return a.edit(cmd, args[0], id, parsed, strings.TrimSpace(reason), asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&id, "id", "", "id of the message, as dlqt shows it")
	f.StringArrayVar(&sets, "set", nil, "PATH=VALUE to set in the JSON payload (repeat for more)")
	f.StringVar(&reason, "reason", "", "why the payload is changed, for the journal (required)")
	f.BoolVar(&asJSON, "json", false, "print the revision (or the proposal) as JSON")
	return cmd
}

func (a *app) edit(cmd *cobra.Command, queue, id string, sets []approval.Set, reason string, asJSON bool) error {
	if a.demo || a.snapshotPath != "" {
		return usageError{errors.New("edit reads a live message: not on a snapshot or the demo")}
	}
	in, err := a.inspect(cmd.Context(), queue)
	if err != nil {
		return err
	}
	chosen := triage.Selection{IDs: []string{id}}.Of(in.List())
	if len(chosen) == 0 {
		return fmt.Errorf("message %s is not in %s", sanitize.Line(id), sanitize.Line(queue))
	}
	body, changes, err := approval.Edit(chosen[0].Message.Body, sets)
	if err != nil {
		return err
	}
	rev := approval.NewRevision(a.vhost, queue, chosen[0], body, changes, a.redactor(), a.actor, reason, time.Now())
	out := cmd.OutOrStdout()
	if a.gated(approval.GateEdit, 1) {
		// The revision names its proposal; the proposal signs the revision.
		plan := approval.Plan{Reason: reason, Selection: "revision " + rev.ID}
		return a.proposeEdit(out, rev, chosen[0], plan, asJSON)
	}
	if err := a.recordRevision(rev, a.actor); err != nil {
		return err
	}
	if asJSON {
		return writeJSON(out, rev)
	}
	printRevision(out, rev)
	return nil
}

// proposeEdit journals the revision under the proposal that must approve
// it, then the proposal (exit 3).
func (a *app) proposeEdit(w io.Writer, rev approval.Revision, msg triage.Triaged, plan approval.Plan, asJSON bool) error {
	plan.Revision = rev.ID
	return a.propose(w, approval.GateEdit, rev.Queue, []triage.Triaged{msg}, plan, asJSON, func(p approval.Proposal) error {
		rev.Proposal, rev.Actor = p.ID, p.Proposer
		return a.recordRevision(rev, p.Proposer)
	})
}

// recordRevision keeps the edited body apart, for the replay alone, then
// journals the revision without it. A revision whose entry then fails
// leaves a body no entry names, which nothing reads.
func (a *app) recordRevision(rev approval.Revision, actor string) error {
	j, err := a.openJournal()
	if err != nil {
		return err
	}
	if _, err := j.PutRevisionBody(rev.Body); err != nil {
		return err
	}
	return journal.NewRecorder(j, actor, a.host).Record(triage.Record{
		Action: triage.ActionEdit, Vhost: rev.Vhost, Queue: rev.Queue, MessageIDs: []string{rev.MessageID}, Reason: rev.Reason,
		Details: map[string]any{"revision_id": rev.ID, "revision": rev},
	})
}

func printRevision(w interface{ Write([]byte) (int, error) }, rev approval.Revision) {
	fmt.Fprintf(w, "revision %s of %s in %s: the original stays in the queue untouched\n", rev.ID, sanitize.Line(rev.MessageID), sanitize.Line(rev.Queue))
	for _, c := range rev.Changes {
		fmt.Fprintf(w, "  %s: %s -> %s\n", sanitize.Line(c.Path), sanitize.Line(dash(c.Before)), sanitize.Line(c.After))
	}
	fmt.Fprintf(w, "  sha256 %s -> %s\n", rev.SHA256Before, rev.SHA256After)
	fmt.Fprintf(w, "dlqt replay %s --id %s publishes it\n", sanitize.Line(rev.Queue), sanitize.Line(rev.MessageID))
}

// useRevisions makes the plan publish the latest approved revision of each
// edited item.
func (a *app) useRevisions(plan *replay.Plan) error {
	j, err := a.openJournal()
	if err != nil {
		return err
	}
	rs, err := j.RecordsOf(approval.RevisionRecord)
	if err != nil {
		return err
	}
	revs, err := approval.ApprovedRevisions(rs, plan.Vhost, plan.Queue)
	if err != nil {
		return err
	}
	out := make(map[string]replay.Revision, len(revs))
	for id, r := range revs {
		body, err := approval.BodyOf(r, j)
		if err != nil {
			return err
		}
		out[id] = replay.Revision{ID: r.ID, Body: body, SHA256: r.SHA256After, OriginalSHA256: r.SHA256Before}
	}
	plan.UseRevisions(out)
	return revisionBodies(j, plan)
}

// revisionBodies reads back the edited bodies of the revisions a journaled
// plan names (a resume): inline in a plan journaled before bodies were
// kept apart, else from the journal's store by their SHA-256. A revision
// left without its body is not published (replay.Item.changed).
func revisionBodies(j approval.BodyStore, plan *replay.Plan) error {
	for i, it := range plan.Items.All() {
		rev := it.Revision
		if rev == nil || rev.Body != nil {
			continue
		}
		withBody := *rev
		if rev.Inline != nil {
			withBody.Body, withBody.SHA256 = rev.Inline, approval.SHA256(rev.Inline)
		} else {
			body, err := j.RevisionBody(rev.SHA256)
			if err != nil {
				return fmt.Errorf("revision %s of %s: %w", rev.ID, sanitize.Line(it.ID), err)
			}
			withBody.Body = body
		}
		it.Revision = &withBody
		plan.Items.Set(i, it)
	}
	return nil
}
