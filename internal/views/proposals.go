package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

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

// Proposals lists the approval workflow's proposals, newest first; one
// of them, opened, shows whole (ShowDetail).
type Proposals struct {
	listScreen
	rows    []ProposalRow
	loading bool
	status  string // the last run's result line

	detailID string   // the proposal shown whole, "" for the list
	detail   []string // its lines, as approval.State.Describe writes them
	vp       viewport.Model
}

// NewProposals returns an empty proposals screen.
func NewProposals(ctx *Context) Proposals {
	vp := viewport.New()
	vp.FillHeight = true
	return Proposals{vp: vp, listScreen: newListScreen(ctx, newTable(ctx, []Column{
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

// Rows are the proposals listed, newest first.
func (p *Proposals) Rows() []ProposalRow { return p.rows }

// Selected is the proposal under the cursor.
func (p *Proposals) Selected() (ProposalRow, bool) {
	i, ok := p.table.Selected()
	if !ok || i >= len(p.rows) {
		return ProposalRow{}, false
	}
	return p.rows[i], true
}

// ShowDetail shows proposal id whole, lines as approval.State.Describe
// writes them, wrapped to the width and scrolled with the usual keys;
// showing the same proposal again keeps the place.
func (p *Proposals) ShowDetail(id string, lines []string) {
	same := id == p.detailID
	p.detailID, p.detail = id, lines
	p.renderDetail()
	if !same {
		p.vp.GotoTop()
	}
}

// HideDetail goes back to the list.
func (p *Proposals) HideDetail() { p.detailID, p.detail = "", nil }

// Detailed is the proposal shown whole, if one is.
func (p *Proposals) Detailed() (string, bool) { return p.detailID, p.detailID != "" }

func (p *Proposals) renderDetail() {
	if p.detailID == "" {
		return
	}
	var out []string
	for _, l := range p.detail {
		if ansi.StringWidth(l) <= p.width {
			out = append(out, l)
			continue
		}
		indent := strings.Repeat(" ", len(l)-len(strings.TrimLeft(l, " ")))
		for i, w := range wrapWords(strings.TrimLeft(l, " "), max(p.width-len(indent)-2, 10)) {
			if i > 0 {
				w = "  " + w // a wrapped line goes on under its start
			}
			out = append(out, indent+w)
		}
	}
	p.vp.SetContent(strings.Join(out, "\n"))
}

// SetSize sets the area of the screen body.
func (p *Proposals) SetSize(w, h int) {
	p.listScreen.SetSize(w, h)
	p.vp.SetWidth(w)
	p.vp.SetHeight(max(h-2, 1))
	p.renderDetail()
}

// Update scrolls the proposal shown whole, or moves in the list.
func (p *Proposals) Update(msg tea.Msg) tea.Cmd {
	if p.detailID == "" {
		return p.listScreen.Update(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	scroll(&p.vp, &p.ctx.Keys, k)
	return nil
}

// View draws the list with its header, or the proposal shown whole.
func (p *Proposals) View() string {
	k := p.ctx.Keys
	if p.detailID != "" {
		title := p.ctx.Styles.Title.Render("proposal " + p.detailID)
		head := fmt.Sprintf("%s runs it once approved; %s back to the list", k.RunProposal.Help().Key, k.Back.Help().Key)
		if p.status != "" {
			head = p.status
		}
		return p.frame(title, sanitize.Line(head), p.vp.View())
	}
	title := p.ctx.Styles.Title.Render("proposals — actions waiting for a second person")
	head := fmt.Sprintf("%d proposal(s); %s shows one whole; %s runs an approved one; dlqt approve ID signs an approval",
		len(p.rows), k.Open.Help().Key, k.RunProposal.Help().Key)
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
	if p.detailID != "" {
		return []key.Binding{k.RunProposal, k.Back, k.Refresh, k.Help, k.Quit}
	}
	return []key.Binding{k.Open, k.RunProposal, k.Back, k.Refresh, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (p *Proposals) FullHelp() [][]key.Binding {
	k := p.ctx.Keys
	if p.detailID != "" {
		return [][]key.Binding{k.navigation(), {k.RunProposal, k.Back, k.Refresh}, k.general()}
	}
	return [][]key.Binding{k.navigation(), {k.Open, k.RunProposal, k.Back, k.Filter}, k.general()}
}
