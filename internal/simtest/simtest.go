// Package simtest starts servebench's simulated engine (package sim) for a test, in one of two
// ways:
//
//   - Start serves it over real HTTP on a loopback port, for tests that run in real time or
//     reach the server from another process;
//   - StartInMemory serves it over in-memory connections (net.Pipe), for tests inside a
//     testing/synctest bubble: the engine's step loop and every client wait on the bubble's
//     virtual clock, so a run of simulated minutes takes only the CPU time it needs. Such a
//     server is reached only through a Dial (openai.Config.DialContext, an http.Transport's
//     DialContext, or HTTPClient): the server's own, or the package's Dial, which routes by
//     address to every in-memory server and dials TCP for any other.
//
// Both stop the server when the test ends. A zero Config serves sim.FastProfile:
//
//	srv := simtest.Start(t, simtest.Config{Options: sim.Options{Seed: 1}})
//	resp, err := http.Get(srv.URL + "/v1/models")
package simtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/servebench/servebench/sim"
)

// Config says which simulator to start.
type Config struct {
	// Profile is the simulated GPU, model and engine; the zero value means sim.FastProfile.
	Profile sim.Profile
	// Options tune the engine (seed, reasoning, vLLM request metrics).
	Options sim.Options
	// Wrap, when set, gets the engine's handler and returns what is served: a proxy that
	// records, edits or breaks what the engine says.
	Wrap func(engine http.Handler) http.Handler
}

// Server is a started simulator.
type Server struct {
	*sim.Server
	// URL is the base URL without /v1 (http://127.0.0.1:PORT). An in-memory server's URL is
	// reached only through Dial (the server's or the package's).
	URL string
	// Dial opens a connection to the server (for openai.Config.DialContext or an
	// http.Transport); an in-memory server's only way in.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// HTTPClient returns a client whose every connection goes to this server.
func (s *Server) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: s.Dial, DisableCompression: true}}
}

// engine builds the simulator c describes and starts its step loop until the test ends.
func engine(tb testing.TB, c Config) (*sim.Server, http.Handler) {
	tb.Helper()
	p := c.Profile
	if p.Name == "" {
		p = sim.FastProfile
	}
	if err := p.Validate(); err != nil {
		tb.Fatalf("simtest: profile %s: %v", p.Name, err)
	}
	s := sim.New(p, c.Options)
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	tb.Cleanup(func() { cancel(); s.Close() })
	h := s.Handler()
	if c.Wrap != nil {
		h = c.Wrap(h)
	}
	return s, h
}

// Start serves the simulator c describes over HTTP on a loopback port until the test ends.
func Start(tb testing.TB, c Config) *Server {
	tb.Helper()
	s, h := engine(tb, c)
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	var d net.Dialer
	return &Server{Server: s, URL: ts.URL, Dial: d.DialContext}
}

// StartInMemory serves the simulator c describes over in-memory connections until the test
// ends, at an address of its own that only Dial and the server's own Dial reach. Call it inside
// a testing/synctest bubble (a goroutine waiting on such a connection is durably blocked there,
// so the bubble's clock advances while every goroutine waits on the engine); the test's cleanup
// closes every connection, so no goroutine of the bubble is left reading one.
func StartInMemory(tb testing.TB, c Config) *Server {
	tb.Helper()
	s, h := engine(tb, c)
	ln := Listen()
	Serve(tb, ln, h)
	return &Server{Server: s, URL: "http://" + ln.Addr().String(), Dial: ln.DialContext}
}

// Serve serves h on ln (a PipeListener, or one that wraps it) until the test ends, or until
// the returned stop is called if that comes first: stop closes the server and its connections
// and waits until it no longer serves. For a test whose server is not the simulator (a
// handler of its own) or that stops a server before the test ends (a run and its resume).
func Serve(tb testing.TB, ln net.Listener, h http.Handler) (stop func()) {
	tb.Helper()
	hs := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(served) }()
	var once sync.Once
	stop = func() { once.Do(func() { _ = hs.Close(); <-served }) }
	tb.Cleanup(stop)
	return stop
}

// Listen returns an in-memory listener at an address of its own (ln.Addr()) that Dial
// reaches until the listener is closed: where a command under test would listen on a loopback
// port, it serves on this instead and stays reachable by address.
func Listen() *PipeListener {
	ln := NewPipeListener()
	ln.addr = memory.add(ln)
	return ln
}

// memory is the in-memory servers of this process by address.
var memory = &network{next: firstMemoryPort, servers: map[string]*PipeListener{}}

// firstMemoryPort is the first port of the addresses in-memory servers claim (127.0.0.1:port):
// only Dial reaches them, so a connection that missed it goes to a real port, where nothing of
// the test listens, and fails.
const firstMemoryPort = 20000

type network struct {
	mu      sync.Mutex
	next    int
	servers map[string]*PipeListener
}

func (n *network) add(l *PipeListener) *net.TCPAddr {
	n.mu.Lock()
	defer n.mu.Unlock()
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: n.next}
	n.next++
	n.servers[addr.String()] = l
	return addr
}

func (n *network) remove(addr string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.servers, addr)
}

func (n *network) lookup(addr string) *PipeListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.servers[addr]
}

// Dial connects to the in-memory server at addr (host:port, as an http.Transport passes it),
// and over TCP to any other address: a whole command given Dial reaches both the in-memory
// simulators of its test and real servers.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if l := memory.lookup(addr); l != nil {
		return l.DialContext(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// PipeListener is a net.Listener whose connections are in-memory pipes handed out by its
// DialContext: inside a testing/synctest bubble a goroutine waiting on one is durably blocked,
// so the bubble's clock runs on. Serve any http.Handler on it with an http.Server.
type PipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  *net.TCPAddr // the address Dial knows it by (Listen); nil: not known to Dial
}

// NewPipeListener returns a listener with no connection yet.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next DialContext.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and DialContext (and Dial's routing to it); connections already open stay
// open.
func (l *PipeListener) Close() error {
	l.once.Do(func() {
		if l.addr != nil {
			memory.remove(l.addr.String())
		}
		close(l.done)
	})
	return nil
}

// Addr is the loopback address Dial knows the listener by (Listen), else 127.0.0.1:0;
// connections come only through DialContext.
func (l *PipeListener) Addr() net.Addr {
	if l.addr != nil {
		return l.addr
	}
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
}

// DialContext opens a connection to whoever Accepts (network and address are ignored).
func (l *PipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	srv, cli := net.Pipe()
	select {
	case l.conns <- srv:
		return cli, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
