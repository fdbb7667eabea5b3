package cli

import (
	"fmt"
	"strings"

	"github.com/dlqt/dlqt/internal/access"
	"github.com/dlqt/dlqt/internal/triage/approval"
)

// approverNow checks, as a proposal is run, that whoever approved it may
// still approve it under the users file in force: an approver removed,
// made a viewer or taken off the proposal's teams since no longer counts.
func approverNow(d approval.Decision, p approval.Proposal, us *access.Users) error {
	u, ok := us.ByName(d.By)
	switch {
	case !ok:
		return fmt.Errorf("its approver %s is no longer in %s", d.By, us.Path)
	case !u.Role.MayAct():
		return fmt.Errorf("its approver %s is now a %s", u.Name, u.Role)
	case !person(u).ApprovesFor(p.Teams):
		return fmt.Errorf("its approver %s approves [%s] now, not for [%s]", u.Name, strings.Join(u.Approves, ", "), strings.Join(p.Teams, ", "))
	}
	return nil
}
