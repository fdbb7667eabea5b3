package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) replayCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "replay",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("replay is being built (issue 3)")
		},
	}
}
