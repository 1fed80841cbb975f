package openai

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Pre-warming limits: at most prewarmParallel dials in progress at once (the server's accept
// queue is finite); a pre-dialled connection older than stashMaxAge is closed instead of used
// (servers drop connections that stay silent: uvicorn after 5 s).
const (
	prewarmParallel = 256
	stashMaxAge     = 4 * time.Second
)

// dialer opens the client's connections: each one a *conn (kernel receive stamps where
// possible), taken from the pre-dialled stash when one is waiting there.
type dialer struct {
	dial   dialFunc
	kernel bool

	mu    sync.Mutex
	stash []stashed // oldest first
	// live counts open connections (in use, idle in the pool or stashed).
	live atomic.Int64
}

type stashed struct {
	c    *conn
	addr string
	at   time.Time
}

// DialContext hands out a pre-dialled connection to addr, else dials one.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if c := d.take(addr); c != nil {
		return c, nil
	}
	return d.open(ctx, network, addr)
}

func (d *dialer) open(ctx context.Context, network, addr string) (*conn, error) {
	nc, err := d.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, live: &d.live}
	d.live.Add(1)
	if d.kernel {
		c.rx = enableRx(nc)
	}
	return c, nil
}

// take returns the newest pre-dialled connection to addr, closing those too old to trust. The
// stash is oldest first (Prewarm stamps each connection as it appends it), so the expired ones are
// its beginning, and with one target the one taken is its end: a first wave of N requests costs
// O(N), not O(N²) (at 4,096 streams the copy this replaced allocated 400 MB inside that wave).
func (d *dialer) take(addr string) *conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	old := 0
	for old < len(d.stash) && now.Sub(d.stash[old].at) > stashMaxAge {
		d.stash[old].c.Close()
		old++
	}
	if old > 0 {
		d.stash = slices.Delete(d.stash, 0, old)
	}
	for i := len(d.stash) - 1; i >= 0; i-- { // newest first
		if d.stash[i].addr == addr {
			c := d.stash[i].c
			d.stash = slices.Delete(d.stash, i, i+1)
			return c
		}
	}
	return nil
}

// closeStash closes every waiting connection.
func (d *dialer) closeStash() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.stash {
		s.c.Close()
	}
	d.stash = nil
}

// Prewarm makes n connections to the target open just before a measured phase, so that the
// first wave of a cell pays for no TCP handshake and finds the kernel's receive stamping on.
// The connections wait (at most 4 s, then they are closed unused) for the next requests that
// need a new connection; idle kept-alive connections count towards n and are used before
// them. A request whose
// pre-dialled connection turns out closed by the server is sent again once, like one on a
// kept-alive connection. Prewarm returns how many connections it opened, and an error naming
// the cause when it opened fewer than n; measuring can go on (those requests dial on their own,
// inside the measurement).
func (c *Client) Prewarm(ctx context.Context, n int) (int, error) {
	n -= int(c.dialer.live.Load())
	if n <= 0 {
		return 0, nil
	}
	u, err := url.Parse(c.endpoint)
	if err != nil {
		return 0, err
	}
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sem := make(chan struct{}, prewarmParallel)
	var mu sync.Mutex
	var got []stashed
	var firstErr error
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			sem <- struct{}{}
			cn, err := c.dialer.open(ctx, "tcp", addr)
			<-sem
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			cn.prewarmed = true
			got = append(got, stashed{c: cn, addr: addr, at: time.Now()})
		})
	}
	wg.Wait()
	c.dialer.mu.Lock()
	c.dialer.stash = append(c.dialer.stash, got...)
	c.dialer.mu.Unlock()
	if len(got) < n {
		return len(got), fmt.Errorf("opened %d of %d connections ahead of the cell (%s): the others are dialled by their first request, inside the measurement", len(got), n, c.redact(firstErr.Error()))
	}
	return len(got), nil
}
