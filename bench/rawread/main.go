// Command rawread is the least a plain amqp091-go program does to see a whole
// queue and leave it as it was: unlimited prefetch, hold every delivery (body
// included), cancel, one Nack(multiple, requeue). make bench measures dlqt
// against it.
package main

import (
	"flag"
	"fmt"
	"os"

	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	url := flag.String("url", "", "AMQP URL including the vhost")
	queue := flag.String("queue", "bench.dlq", "queue")
	n := flag.Int("n", 100000, "messages to hold")
	flag.Parse()
	held, err := read(*url, *queue, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rawread:", err)
		os.Exit(1)
	}
	fmt.Println(held)
}

func read(url, queue string, n int) (int, error) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	if err := ch.Qos(0, 0, false); err != nil {
		return 0, err
	}
	deliveries, err := ch.Consume(queue, "raw", false, false, false, false, nil)
	if err != nil {
		return 0, err
	}
	var held []amqp.Delivery
	var last uint64
	for d := range deliveries {
		held = append(held, d)
		last = d.DeliveryTag
		if len(held) == n {
			break
		}
	}
	if err := ch.Cancel("raw", false); err != nil {
		return 0, err
	}
	for d := range deliveries {
		last = max(last, d.DeliveryTag)
	}
	if err := ch.Nack(last, true, true); err != nil {
		return 0, err
	}
	return len(held), ch.Close()
}
