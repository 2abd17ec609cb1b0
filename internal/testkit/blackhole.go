package testkit

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// BlackHole is a TCP listener that accepts connections, reads and discards what they send, and
// never answers (a broker that hangs); it returns its address. The listener and its connections
// close when the test ends.
func BlackHole(tb testing.TB) string {
	tb.Helper()
	addr, _ := CountingBlackHole(tb)
	return addr
}

// CountingBlackHole is BlackHole that also counts the connections it has accepted (whether a
// client tried at all).
func CountingBlackHole(tb testing.TB) (addr string, accepts *atomic.Int64) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	accepts = new(atomic.Int64)
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepts.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	tb.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String(), accepts
}
