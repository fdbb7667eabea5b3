// Command dlqt triages RabbitMQ dead-letter and parking queues: a full-screen
// terminal UI, and headless commands on the same engine for scripts. The
// commands live in internal/cli; this file embeds the assets and hands
// Ctrl-C and SIGTERM to cli.Interrupts (the first cancels, the second
// stops a replay's wait for its confirms).
package main

import (
	_ "embed"
	"os"

	"github.com/dlqt/dlqt/internal/cli"
)

//go:embed keymap.yaml
var defaultKeymap []byte

// demoSnapshot was captured from the scenarios of `dlqt demo load` on a real
// RabbitMQ 3.10 (see `make demo-snapshot`), so the demo shows what the broker
// really writes.
//
//go:embed testdata/demo.snapshot.json
var demoSnapshot []byte

func main() {
	ctx, stop := cli.Interrupts(os.Stderr)
	code := cli.Main(ctx, os.Args[1:], cli.Assets{Keymap: defaultKeymap, DemoSnapshot: demoSnapshot}, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
