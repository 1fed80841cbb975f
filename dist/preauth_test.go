package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
)

// Three strangers that each send 200 MB of garbage without a newline (a hello whose name never
// ends; reconnecting whenever the coordinator hangs up) leave the coordinator's memory bounded,
// while a worker joins and a cell is measured. Before, one such line was held whole (400 MB took it from 23 MB to
// 957 MB); now a line is cut at 4 KiB before the token is proven.
func TestGarbageBeforeAuthLeavesMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 600 MB over loopback")
	}
	origin := time.Now()
	srv := &fakeServer{origin: origin, ttft: 5 * time.Millisecond, perTok: time.Millisecond}
	c := &Coordinator{Token: testToken, Origin: origin, MinWorkers: 1, Rejoin: time.Second}
	if err := c.Listen(t.Context(), "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	var peak atomic.Uint64
	sampling, stopSampling := context.WithCancel(t.Context())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for sampling.Err() == nil {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	const each = 200 << 20
	var sent [3]atomic.Int64
	var attackers sync.WaitGroup
	chunk := []byte(strings.Repeat("A", 1<<20))
	for i := range sent {
		attackers.Go(func() {
			for sent[i].Load() < each {
				conn, err := net.Dial("tcp", c.Addr())
				if err != nil {
					time.Sleep(time.Millisecond)
					continue
				}
				// a hello whose name never ends: a JSON decoder holds it all, waiting for the rest
				_, _ = conn.Write([]byte(`{"t":"hello","name":"`))
				for sent[i].Load() < each {
					n, err := conn.Write(chunk)
					sent[i].Add(int64(n))
					if err != nil {
						break
					}
				}
				conn.Close()
			}
		})
	}
	w := &Worker{Coordinator: c.Addr(), Token: testToken, Name: "honest", ConnectTimeout: time.Minute,
		Open: func(ctx context.Context, plan servebench.Plan, marker string) (*Target, error) {
			return &Target{Client: srv, Prompts: noPrompts{}, Origin: origin}, nil
		}}
	done := make(chan error, 1)
	go func() { done <- w.Run(t.Context()) }()
	if err := c.WaitFor(t.Context(), 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	spec := (&rig{origin: origin}).spec(2, 20)
	var s sinkInto
	if _, err := c.Run(t.Context(), spec, nil, s.sink); err != nil {
		t.Fatalf("the cell failed beside the garbage: %v", err)
	}
	attackers.Wait()
	stopSampling()
	<-sampled
	c.Close()
	<-done
	total := sent[0].Load() + sent[1].Load() + sent[2].Load()
	t.Logf("%d MB of garbage sent; heap %.1f MB before, peak %.1f MB; %d records", total>>20, float64(base.HeapAlloc)/(1<<20), float64(peak.Load())/(1<<20), len(s.recs))
	if total < 3*each {
		t.Errorf("only %d bytes of garbage went out", total)
	}
	if len(s.recs) < 20 {
		t.Errorf("%d records: the cell did not complete", len(s.recs))
	}
	if p := peak.Load(); p > base.HeapAlloc+64<<20 {
		t.Errorf("the heap peaked at %.1f MB (%.1f MB before the garbage)", float64(p)/(1<<20), float64(base.HeapAlloc)/(1<<20))
	}
}

// Silent connections are cut AuthTimeout after they open, at most MaxPending wait at once
// (the others are closed at once), and a worker still joins once they are gone.
func TestSilentConnectionsAreCutAndCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		opened := time.Now()
		var cut sync.WaitGroup
		var late atomic.Int32
		for range 40 {
			conn, err := r.ln.DialContext(t.Context(), "", "")
			if err != nil {
				t.Fatal(err)
			}
			cut.Go(func() {
				_, _ = conn.Read(make([]byte, 1)) // returns when the coordinator hangs up
				if time.Since(opened) > 5*time.Second {
					late.Add(1)
				}
				conn.Close()
			})
		}
		r.honest("h1")
		if err := r.c.WaitFor(t.Context(), 1, 10*time.Second); err != nil {
			t.Fatalf("the worker could not join beside 40 silent connections: %v", err)
		}
		cut.Wait()
		if n := late.Load(); n > 0 {
			t.Errorf("%d silent connections stayed open longer than 5 s", n)
		}
	})
}

// The coordinator says nothing that depends on the token before the caller proved it: its
// challenge holds only its nonce. A wrong proof is refused after FailDelay, so at most
// MaxPending guesses a second get an answer.
func TestHandshakeGivesNoOracle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		// hello says hello and returns the coordinator's answer (an error when it hung up: more
		// than MaxPending are waiting)
		hello := func() (*peer, msg, error) {
			conn, err := r.ln.DialContext(t.Context(), "", "")
			if err != nil {
				return nil, msg{}, err
			}
			p := newPeer(conn, maxMessageBytes)
			if err := p.send(msg{T: tHello, Name: "guesser", Nonce: nonce()}); err != nil {
				return nil, msg{}, err
			}
			ch, err := p.recv()
			return p, ch, err
		}
		first, ch, err := hello()
		if err != nil {
			t.Fatal(err)
		}
		first.conn.Close()
		if ch.T != tChallenge || !validNonce(ch.Nonce) || ch.MAC != "" || ch.Plan != nil || ch.Marker != "" || ch.Err != "" {
			t.Fatalf("the challenge says more than a nonce: %+v", ch)
		}
		start := time.Now()
		var answered sync.WaitGroup
		var inFirstSecond atomic.Int32
		for range 40 {
			answered.Go(func() {
				p, _, err := hello()
				for err != nil {
					time.Sleep(100 * time.Millisecond)
					p, _, err = hello()
				}
				_ = p.send(msg{T: tAuth, MAC: proof("a guess at the token, long enough", "worker", "x", "y")})
				m, err := p.recv()
				if err != nil || m.T != tRefused || m.MAC != "" || m.Plan != nil {
					t.Errorf("a wrong proof got %+v, %v", m, err)
				}
				if time.Since(start) < time.Second {
					inFirstSecond.Add(1)
				}
				p.conn.Close()
			})
		}
		answered.Wait()
		if n := inFirstSecond.Load(); n > 0 {
			t.Errorf("%d wrong proofs were answered within a second", n)
		}
		if d := time.Since(start); d < 2*time.Second {
			t.Errorf("40 wrong proofs were all answered within %s: they are not held", d)
		}
	})
}

// A worker takes a plan only from a coordinator that proved the token after it.
func TestWorkerRefusesAnImpostor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		defer ln.Close()
		go func() {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			p := newPeer(conn, maxMessageBytes)
			_, _ = p.recv()
			_ = p.send(msg{T: tChallenge, Nonce: nonce()})
			_, _ = p.recv()
			plan := servebench.Plan{}
			_ = p.send(msg{T: tWelcome, MAC: strings.Repeat("ab", 32), Plan: &plan})
		}()
		opened := false
		w := &Worker{Token: testToken, Name: "w", Dial: dialer(ln), ConnectTimeout: time.Minute,
			Open: func(ctx context.Context, plan servebench.Plan, marker string) (*Target, error) {
				opened = true
				return nil, errors.New("opened")
			}}
		err := w.Run(t.Context())
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "did not prove") || opened {
			t.Fatalf("worker: %v (opened the plan: %v)", err, opened)
		}
	})
}

// A worker that cannot reach its coordinator says where it tries, why it failed, and that it
// tries again; then it gives up with the cause.
func TestWorkerSaysWhatItWaitsFor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	var mu sync.Mutex
	var logs []string
	w := &Worker{Coordinator: "tcp://" + addr, Token: testToken, Name: "w", ConnectTimeout: 700 * time.Millisecond,
		Logf: func(format string, args ...any) {
			mu.Lock()
			logs = append(logs, servebench.TerminalText(fmt.Sprintf(format, args...), 400, false))
			mu.Unlock()
		},
		Open: func(context.Context, servebench.Plan, string) (*Target, error) { return nil, errors.New("unreachable") }}
	err = w.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "could not join the coordinator at tcp://"+addr) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Run: %v", err)
	}
	all := strings.Join(logs, "\n")
	for _, want := range []string{"joining the coordinator at tcp://" + addr, "waiting for the coordinator at tcp://" + addr + ": cannot connect: connection refused; trying again"} {
		if !strings.Contains(all, want) {
			t.Errorf("the worker's lines lack %q:\n%s (%d lines; %v)", want, all, len(logs), err)
		}
	}
}

func TestParseCoordinator(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"10.0.0.5:7070", "10.0.0.5:7070", ""},
		{"tcp://10.0.0.5:7070", "10.0.0.5:7070", ""},
		{"tcp://coordinator.example:7070/", "coordinator.example:7070", ""},
		{"TCP://[::1]:7070", "[::1]:7070", ""},
		{"http://10.0.0.5:7070", "", "not HTTP: write it --coordinator tcp://10.0.0.5:7070"},
		{"https://10.0.0.5:7070/v1", "", "tcp://10.0.0.5:7070"},
		{"http://10.0.0.5", "", "tcp://HOST:PORT"},
		{"udp://10.0.0.5:7070", "", "unknown scheme"},
		{"10.0.0.5", "", "is not HOST:PORT"},
		{"tcp://10.0.0.5:7070/path", "", "is not HOST:PORT"},
		{":7070", "", "has no host"},
		{"10.0.0.5:http", "", "is not a number"},
		{"10.0.0.5:70000", "", "is not a number"},
	} {
		got, err := ParseCoordinator(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseCoordinator(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestCheckToken(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{"s3cret", false},
		{"abc", false},
		{"test-token-never-printed", false},
		{strings.Repeat("a", 40), false},
		{strings.Repeat("ab", 20), false},
		{"0123456789abcdef0123456789abcde", false}, // 31 hex digits: 124 bits
		{"with a space in it, long enough to pass", false},
		{testToken, true},                          // openssl rand -hex 16
		{"q1Zr0XuM7f9kP2vS8bYt3wLh6nCj4aEd", true}, // openssl rand -base64 24
	} {
		err := CheckToken(tc.token, "SERVEBENCH_TOKEN")
		if (err == nil) != tc.ok {
			t.Errorf("CheckToken(%q): %v, want ok %v", tc.token, err, tc.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), MakeToken) || strings.Contains(err.Error(), tc.token)) {
			t.Errorf("CheckToken(%q): %q should name %q and never quote the token", tc.token, err, MakeToken)
		}
	}
}
