package broker_test

import (
	"io"
	"net"
	"net/url"
	"testing"
	"time"
)

// slowLink points cfg's AMQP URL at a proxy that passes what the broker
// sends at bytesPerSec (what the client sends goes at once): a message of
// a few MiB then takes seconds to arrive, as 120 MiB does on a loaded
// machine, whatever the load.
func slowLink(t *testing.T, f *fixture, bytesPerSec int) {
	t.Helper()
	u, err := url.Parse(f.cfg.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	target := u.Host
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			broker, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			t.Cleanup(func() { client.Close(); broker.Close() })
			go func() { _, _ = io.Copy(broker, client); broker.Close() }()
			go throttle(client, broker, bytesPerSec)
		}
	}()
	u.Host = ln.Addr().String()
	f.cfg.AMQPURL = u.String()
}

// throttle copies from to dst at about bytesPerSec, a tenth of a second's
// worth at a time.
func throttle(dst net.Conn, from net.Conn, bytesPerSec int) {
	defer dst.Close()
	buf := make([]byte, max(bytesPerSec/10, 1))
	for {
		n, err := from.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			time.Sleep(time.Duration(n) * time.Second / time.Duration(bytesPerSec))
		}
		if err != nil {
			return
		}
	}
}
