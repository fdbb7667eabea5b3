package views

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// Styles is every style dlqt draws with, built once from the theme. Nothing
// relies on colour alone: the selected row carries a "›" marker, states and
// reasons are words, so a NO_COLOR terminal loses only decoration.
type Styles struct {
	Title    lipgloss.Style // breadcrumb line at the top
	Header   lipgloss.Style // table column titles
	Selected lipgloss.Style // the row under the cursor
	Dim      lipgloss.Style // secondary text: ages, hints
	Section  lipgloss.Style // section titles of the message view
	Label    lipgloss.Style // field names of the message view
	Warn     lipgloss.Style // redactions, delivery counts near the limit
	Status   lipgloss.Style // bottom status line
	Error    lipgloss.Style // last error line
	Notice   lipgloss.Style // notice line (e.g. "showing the demo snapshot")
	Dialog   lipgloss.Style // dialog box
	Help     help.Styles
	Input    textinput.Styles // filter and tag prompts
}

// NewStyles builds the theme for a dark or light background. With colour off
// (NO_COLOR) only bold, underline and reverse remain.
func NewStyles(isDark, colour bool) Styles {
	if !colour {
		plain := lipgloss.NewStyle()
		return Styles{
			Title:    plain.Bold(true),
			Header:   plain.Bold(true),
			Selected: plain.Reverse(true),
			Dim:      plain,
			Section:  plain.Bold(true).Underline(true),
			Label:    plain,
			Warn:     plain.Bold(true),
			Status:   plain.Reverse(true),
			Error:    plain.Bold(true),
			Notice:   plain,
			Dialog:   plain.Border(lipgloss.NormalBorder()).Padding(0, 1),
			Help: help.Styles{
				Ellipsis: plain, ShortKey: plain.Bold(true), ShortDesc: plain, ShortSeparator: plain,
				FullKey: plain.Bold(true), FullDesc: plain, FullSeparator: plain,
			},
			// a placeholder must not read as text already typed: faint is no colour
			Input: textinput.Styles{
				Focused: textinput.StyleState{Placeholder: plain.Faint(true)},
				Blurred: textinput.StyleState{Placeholder: plain.Faint(true)},
			},
		}
	}
	ld := lipgloss.LightDark(isDark)
	accent := ld(lipgloss.Color("#5A3FC0"), lipgloss.Color("#B9A5FF"))
	dim := ld(lipgloss.Color("#6B6B6B"), lipgloss.Color("#8A8A8A"))
	warn := ld(lipgloss.Color("#A35200"), lipgloss.Color("#FFB454"))
	bad := ld(lipgloss.Color("#B00020"), lipgloss.Color("#FF6B6B"))
	bar := ld(lipgloss.Color("#E4E0F5"), lipgloss.Color("#2E2A40"))
	s := lipgloss.NewStyle()
	input := textinput.DefaultStyles(isDark)
	input.Cursor.Blink = false // a steady cursor needs no tick messages
	return Styles{
		Title:    s.Bold(true).Foreground(accent),
		Header:   s.Bold(true).Foreground(dim),
		Selected: s.Bold(true).Foreground(ld(lipgloss.Color("#000000"), lipgloss.Color("#FFFFFF"))).Background(bar),
		Dim:      s.Foreground(dim),
		Section:  s.Bold(true).Foreground(accent),
		Label:    s.Foreground(dim),
		Warn:     s.Foreground(warn),
		Status:   s.Background(bar),
		Error:    s.Bold(true).Foreground(bad),
		Notice:   s.Foreground(warn),
		Dialog:   s.Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		Help:     help.DefaultStyles(isDark),
		Input:    input,
	}
}
