// Package accept is the accept loop of bench's own servers (bench mix
// --serve, bench mix tls): a goroutine per connection, and at the end
// every connection closed and every handler returned.
package accept

import (
	"context"
	"net"
	"sync"
)

// Serve hands every connection ln accepts to handle, in a goroutine of
// its own, until ctx ends; then it closes ln and the connections still
// open, and returns once every handle has returned. It returns nil when
// ctx ended, or the error that stopped Accept. handle need not close
// its connection.
func Serve(ctx context.Context, ln net.Listener, handle func(net.Conn)) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			handle(c)
			c.Close()
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}
