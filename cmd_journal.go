package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) journalCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "journal",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("journal is being built (issue 3)")
		},
	}
}
