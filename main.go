// Command dlqt triages RabbitMQ dead-letter and parking queues: a full-screen
// terminal UI, and headless commands on the same engine for scripts. The
// commands live in internal/cli; this file embeds the assets and turns
// Ctrl-C and SIGTERM into a cancelled context.
package main

import (
	"context"
	_ "embed"
	"os"
	"os/signal"
	"syscall"

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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Assets{Keymap: defaultKeymap, DemoSnapshot: demoSnapshot}, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
