package approval

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Person is someone the users file names: a role (viewer, operator,
// admin) and the teams whose proposals they may approve ("*": all).
type Person struct {
	Name     string
	Role     string
	Approves []string
}

// RoleViewer may look but never change a queue or decide on one.
const RoleViewer = "viewer"

// Refusals a caller can tell apart.
var (
	ErrSelfApproval = errors.New("the proposer may not approve or reject their own proposal (four eyes)")
	ErrNotApprover  = errors.New("not an approver for this proposal's owners")
	ErrNotPending   = errors.New("not pending")
	ErrNotApproved  = errors.New("not approved")
	ErrExpired      = errors.New("expired")
	ErrAlreadyRun   = errors.New("already run")
	ErrViewer       = errors.New("a viewer may not change a queue")
)

// ApprovesFor reports whether p may decide on proposals owned by teams; a
// proposal no owner rule matched needs any approver.
func (p Person) ApprovesFor(teams []string) bool {
	if slices.Contains(p.Approves, "*") {
		return true
	}
	if len(teams) == 0 {
		return len(p.Approves) > 0
	}
	for _, t := range teams {
		if !slices.Contains(p.Approves, t) {
			return false
		}
	}
	return true
}

// CanDecide says why who may not approve or reject s at now, nil if
// they may.
func CanDecide(s State, who Person, now time.Time) error {
	id := s.Proposal.ID
	if st := s.Status(now); st != StatusPending {
		return fmt.Errorf("proposal %s is %s: %w", id, st, ErrNotPending)
	}
	if who.Name == s.Proposal.Proposer {
		return fmt.Errorf("%s proposed %s: %w", who.Name, id, ErrSelfApproval)
	}
	if who.Role == RoleViewer {
		return fmt.Errorf("%s is a viewer: %w", who.Name, ErrNotApprover)
	}
	if !who.ApprovesFor(s.Proposal.Teams) {
		return fmt.Errorf("%s approves [%s], %s is owned by [%s]: %w", who.Name,
			strings.Join(who.Approves, ", "), id, strings.Join(s.Proposal.Teams, ", "), ErrNotApprover)
	}
	return nil
}

// CanRun says why who may not run s at now, nil if they may: it must be
// approved (by someone else than its proposer, for the hash it still
// has), not expired and not run before.
func CanRun(s State, who Person, now time.Time) error {
	id := s.Proposal.ID
	switch st := s.Status(now); st {
	case StatusRun:
		return fmt.Errorf("proposal %s was run by %s at %s: %w", id, s.RunBy, s.RunAt.UTC().Format(time.RFC3339), ErrAlreadyRun)
	case StatusExpired:
		return fmt.Errorf("proposal %s expired at %s: %w", id, s.Proposal.ExpiresAt.UTC().Format(time.RFC3339), ErrExpired)
	case StatusApproved:
	default:
		return fmt.Errorf("proposal %s is %s: %w", id, st, ErrNotApproved)
	}
	if who.Role == RoleViewer {
		return fmt.Errorf("%s: %w", who.Name, ErrViewer)
	}
	d, _ := s.Approval()
	if d.By == s.Proposal.Proposer || d.Hash != s.Proposal.Hash() {
		return fmt.Errorf("proposal %s: its approval does not hold (approver %s, hash %s): %w", id, d.By, d.Hash, ErrNotApproved)
	}
	return nil
}
