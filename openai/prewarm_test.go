package openai

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// TestPrewarmOpensConnectionsAhead: after Prewarm(n), n requests in flight together dial
// nothing more; a pre-dialled connection left too long is not used.
func TestPrewarmOpensConnectionsAhead(t *testing.T) {
	const n = 8
	release := make(chan struct{})
	var inFlight atomic.Int32
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inFlight.Add(1) == n {
			close(release)
		}
		<-release
		scripted(step{data: chatChunk(`{"content":"a"}`) + doneEvent})(w, r)
	}))
	var dials atomic.Int32
	c := newClient(t, base, func(cfg *Config) {
		cfg.MaxConnections = n
		cfg.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
	})
	got, err := c.Prewarm(context.Background(), n)
	if err != nil || got != n || dials.Load() != n {
		t.Fatalf("Prewarm: %d, %v, %d dials", got, err, dials.Load())
	}
	done := make(chan servebench.Record, n)
	for range n {
		go func() { done <- c.Do(context.Background(), testRequest()) }()
	}
	for range n {
		if rec := <-done; !rec.OK() || rec.Retries != 0 {
			t.Fatalf("%s %s retries %d", rec.ErrorClass, rec.Error, rec.Retries)
		}
	}
	if dials.Load() != n {
		t.Errorf("%d dials for %d requests on %d pre-warmed connections: the first wave dialled", dials.Load(), n, n)
	}
}

// TestStashExpires: a pre-dialled connection older than stashMaxAge is closed, not handed out.
func TestStashExpires(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	d := &dialer{}
	old := &conn{Conn: a}
	d.stash = []stashed{{c: old, addr: "x:1", at: time.Now().Add(-stashMaxAge - time.Second)}}
	if got := d.take("x:1"); got != nil {
		t.Fatal("an expired connection was handed out")
	}
	if _, err := a.Write([]byte{1}); err == nil {
		t.Error("the expired connection was not closed")
	}
	fresh := &conn{Conn: b}
	d.stash = []stashed{{c: fresh, addr: "y:1", at: time.Now()}}
	if d.take("x:1") != nil || d.take("y:1") != fresh || len(d.stash) != 0 {
		t.Errorf("stash by address broken: %d left", len(d.stash))
	}
}

// TestPrewarmReportsFailure: nothing listening → an error that says what it means.
func TestPrewarmReportsFailure(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c := newClient(t, "http://"+addr+"/v1", nil)
	got, err := c.Prewarm(context.Background(), 3)
	if got != 0 || err == nil {
		t.Fatalf("Prewarm: %d, %v", got, err)
	}
}

// TestStashTakeIsCheap: taking a connection from a large stash allocates nothing and keeps the
// rest in order (it once copied the whole stash for every request of a first wave).
func TestStashTakeIsCheap(t *testing.T) {
	d := &dialer{}
	now := time.Now()
	const n = 1000
	conns := make([]*conn, n)
	for i := range conns {
		conns[i] = &conn{}
		d.stash = append(d.stash, stashed{c: conns[i], addr: "x:1", at: now})
	}
	next := n - 1
	allocs := testing.AllocsPerRun(n/2, func() {
		if got := d.take("x:1"); got != conns[next] {
			t.Fatalf("took the wrong connection (want the newest, %d)", next)
		}
		next--
	})
	if allocs != 0 {
		t.Errorf("take allocates %.1f times per call", allocs)
	}
	if len(d.stash) != n-n/2-1 || d.stash[0].c != conns[0] {
		t.Errorf("%d left, first %p (want %d, %p)", len(d.stash), d.stash[0].c, n-n/2-1, conns[0])
	}
}
