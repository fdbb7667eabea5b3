package cli

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dlqt/dlqt/internal/broker"
	scenario "github.com/dlqt/dlqt/internal/demo" // "demo" names the command below
)

// demoVhost is the only vhost `dlqt demo load` creates, empties or deletes.
const demoVhost = "dlqt-demo"

// openDemo reads the bundled demo snapshot the binary embeds.
func (a *app) openDemo() (*broker.Snapshot, error) {
	s, err := broker.ReadSnapshot(bytes.NewReader(a.assets.DemoSnapshot))
	if err != nil {
		return nil, fmt.Errorf("bundled demo snapshot: %w", err)
	}
	r := broker.NewSnapshotReader("demo", s)
	r.UseAppFrames(a.appFrames)
	return r, nil
}

func (a *app) demoCommand() *cobra.Command {
	demo := &cobra.Command{
		Use:   "demo",
		Short: "Demo scenarios on a local broker",
	}
	demo.AddCommand(&cobra.Command{
		Use:   "load",
		Short: "Recreate vhost " + demoVhost + " and make realistic messages die in it",
		Long: `load (re)creates the vhost ` + demoVhost + ` on the broker and builds the demo
topologies in it for real: broker dead-lettering (rejected, expired, maxlen,
delivery_limit) into fanout parking queues, application-managed retries through
TTL buckets into a DLQ, and framework fault messages. It never touches any
other vhost.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f := cmd.Flags().Lookup("vhost"); f != nil && f.Changed && f.Value.String() != demoVhost {
				// it would load dlqt-demo while the user believes their own vhost is used
				return usageError{fmt.Errorf("demo load always (re)creates vhost %s, never --vhost %s: drop --vhost", demoVhost, f.Value.String())}
			}
			c := a.brokerConfig()
			c.Vhost = demoVhost
			if err := broker.DeleteVhost(c); err != nil {
				return err
			}
			if err := broker.CreateVhost(c); err != nil {
				return err
			}
			start := time.Now()
			if _, err := scenario.LoadScenarios(cmd.Context(), c); err != nil {
				return fmt.Errorf("loading demo scenarios into vhost %s: %w", demoVhost, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "dlqt: demo scenarios loaded into vhost %s in %s; open them with: dlqt --vhost %s\n",
				demoVhost, time.Since(start).Round(time.Millisecond), demoVhost)
			return nil
		},
	})
	return demo
}
