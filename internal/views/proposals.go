package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/dlqt/dlqt/internal/triage/sanitize"
)

// ProposalRow is one proposal as the proposals screen shows it.
type ProposalRow struct {
	ID        string
	Status    string // pending, approved, rejected, expired, run
	Action    string
	Count     int
	Queue     string
	Proposer  string
	DecidedBy string
	Expires   time.Time
}

// Proposals lists the approval workflow's proposals, newest first.
type Proposals struct {
	listScreen
	rows    []ProposalRow
	loading bool
	status  string // the last run's result line
}

// NewProposals returns an empty proposals screen.
func NewProposals(ctx *Context) Proposals {
	return Proposals{listScreen: newListScreen(ctx, newTable(ctx, []Column{
		{Title: "id", Width: 13},
		{Title: "status", Width: 8},
		{Title: "action", Width: 7},
		{Title: "count", Width: 5, Right: true},
		{Title: "queue", Width: 8, Flex: 2},
		{Title: "proposer", Width: 8, Flex: 1},
		{Title: "decided by", Width: 10, Flex: 1, Shed: 1},
		{Title: "expires", Width: 8, Right: true, Shed: 2},
	}))}
}

// SetLoading says the journal is being read.
func (p *Proposals) SetLoading() { p.loading = true }

// SetStatus shows one line under the title (a run's result).
func (p *Proposals) SetStatus(s string) { p.status = s }

// SetRows shows rows (oldest first) newest first.
func (p *Proposals) SetRows(rows []ProposalRow) {
	p.loading = false
	p.rows = make([]ProposalRow, len(rows))
	now := p.ctx.now()
	cells := make([][]string, len(rows))
	for i, r := range rows {
		at := len(rows) - 1 - i
		p.rows[at] = r
		left := "-"
		if r.Status == "pending" || r.Status == "approved" {
			left = "in " + Age(r.Expires.Sub(now))
		}
		cells[at] = []string{r.ID, r.Status, r.Action, Count(r.Count), sanitize.Line(r.Queue),
			sanitize.Line(r.Proposer), orDash(sanitize.Line(r.DecidedBy)), left}
	}
	p.table.SetRows(cells)
}

// Selected is the proposal under the cursor.
func (p *Proposals) Selected() (ProposalRow, bool) {
	i, ok := p.table.Selected()
	if !ok || i >= len(p.rows) {
		return ProposalRow{}, false
	}
	return p.rows[i], true
}

// View draws the list with its header.
func (p *Proposals) View() string {
	k := p.ctx.Keys
	title := p.ctx.Styles.Title.Render("proposals — actions waiting for a second person")
	head := fmt.Sprintf("%d proposal(s); %s runs an approved one; dlqt approve ID signs an approval", len(p.rows), k.RunProposal.Help().Key)
	switch {
	case p.loading:
		head = "reading the journal…"
	case p.status != "":
		head = p.status
	}
	if len(p.rows) == 0 && !p.loading {
		return fitLines(title+"\n"+head+"\n\nNo proposals: nothing waits for approval.", p.width, p.height)
	}
	return p.frame(title, sanitize.Line(strings.TrimSpace(head)), p.table.View())
}

// ShortHelp implements help.KeyMap.
func (p *Proposals) ShortHelp() []key.Binding {
	k := p.ctx.Keys
	return []key.Binding{k.RunProposal, k.Back, k.Refresh, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (p *Proposals) FullHelp() [][]key.Binding {
	k := p.ctx.Keys
	return [][]key.Binding{k.navigation(), {k.RunProposal, k.Back, k.Filter}, k.general()}
}
