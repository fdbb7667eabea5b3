// Command load fills a queue of its own vhost with N parked messages of
// SIZE bytes (bench/internal/fill), for measuring by hand what make bench
// measures. It creates the vhost and leaves it: delete it when done.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dlqt/dlqt/bench/internal/fill"
	"github.com/dlqt/dlqt/internal/broker"
)

func main() {
	cfg := broker.Config{}
	flag.StringVar(&cfg.AMQPURL, "amqp-url", broker.DefaultAMQPURL, "AMQP URL")
	flag.StringVar(&cfg.MgmtURL, "mgmt-url", broker.DefaultMgmtURL, "management URL")
	flag.StringVar(&cfg.Vhost, "vhost", "", "vhost to create and fill")
	queue := flag.String("queue", "bench.dlq", "queue to declare and fill")
	n := flag.Int("n", 100000, "messages")
	size := flag.Int("size", 1024, "body bytes")
	flag.Parse()
	if err := fill.Load(cfg, *queue, *n, *size); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}
