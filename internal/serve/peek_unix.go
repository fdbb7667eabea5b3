//go:build unix

package serve

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// hasSpoken says whether conn's peer sent bytes that wait unread, without
// reading them or waiting: an ssh client sends its version line as soon as
// it connects, so a connection with nothing to read yet may be idle.
func hasSpoken(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	var b [1]byte
	if err := raw.Read(func(fd uintptr) bool {
		n, _, _ = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return true // never wait for data
	}); err != nil {
		return false
	}
	return n > 0
}
