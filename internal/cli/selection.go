package cli

import (
	"errors"
	"fmt"

	"github.com/dlqt/dlqt/internal/triage"
)

// selection reads --id, --group and --where, which discard and replay share:
// ids or a group, a group narrowed by a filter, or a filter alone. --where
// is parsed before any broker is touched, so a typo costs nothing.
func (a *app) selection(ids []string, group string, where []string) (triage.Selection, error) {
	sel := triage.Selection{IDs: ids}
	if group != "" && len(ids) > 0 {
		return sel, usageError{errors.New("select messages by id or by group, not both (--id ID ..., --group REASON[/CODE] or --where EXPR)")}
	}
	if group != "" {
		k, err := triage.ParseGroupKey(group)
		if err != nil {
			return sel, usageError{err}
		}
		sel.Group = &k
	}
	if len(where) > 0 {
		if len(ids) > 0 {
			return sel, usageError{errors.New("--where narrows a group or the whole queue; --id already names the messages: use one or the other")}
		}
		f, err := a.parseWhere(where)
		if err != nil {
			return sel, err
		}
		sel.Where = &f
	}
	if err := sel.Validate(); err != nil {
		return sel, usageError{fmt.Errorf("%w (--id ID ..., --group REASON[/CODE] or --where EXPR)", err)}
	}
	return sel, nil
}
