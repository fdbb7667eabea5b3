package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) discardCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "discard",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("discard is being built (issue 3)")
		},
	}
}
