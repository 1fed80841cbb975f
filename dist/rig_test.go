package dist

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/load"
)

// testToken is strong enough for CheckToken (and never printed).
const testToken = "9f2c61d0a4b85e37c1d06f9ab2e4c873"

// newPipeListener is an in-memory listener (simtest.PipeListener): every connection is a
// net.Pipe, so inside a synctest bubble every timing is exact.
func newPipeListener() *simtest.PipeListener { return simtest.NewPipeListener() }

// dialer is a Worker's Dial into ln.
func dialer(ln *simtest.PipeListener) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) { return ln.DialContext(ctx, "", "") }
}

// fakeServer answers every request after ttft, then one token every perToken: a record as the
// real client makes it (usage counts, Derive's values), offsets from origin.
//
// Like a real client, it stamps the start a moment after it is called and returns a moment
// after the end: on virtual time no record then ends (or starts) at the very instant a window
// opens or closes, where the rounding of two equal offsets would decide whether it counts.
type fakeServer struct {
	origin        time.Time
	ttft, perTok  time.Duration
	requests      atomic.Int64
	measuredStart atomic.Int64
}

func (f *fakeServer) Do(ctx context.Context, req *servebench.Request) servebench.Record {
	f.requests.Add(1)
	time.Sleep(500 * time.Microsecond)
	start := time.Now()
	out := req.MaxOutputTokens
	rec := servebench.Record{CellKey: req.Cell, Seq: req.Seq, Warmup: req.Warmup, StartOffsetSeconds: start.Sub(f.origin).Seconds(),
		InputTokens: req.ContextTokens, InputTokensRequested: req.ContextTokens, InputTokensSource: servebench.SourceUsage,
		OutputTokens: out, OutputTokensRequested: out, OutputTokensSource: servebench.SourceUsage, Chunks: out}
	total := f.ttft + time.Duration(out-1)*f.perTok
	select {
	case <-time.After(total):
	case <-ctx.Done():
		rec.ErrorClass, rec.Error = servebench.ErrCanceled, "canceled"
		rec.EndOffsetSeconds = time.Since(f.origin).Seconds()
		return rec
	}
	servebench.Derive(&rec, servebench.Timing{FirstToken: f.ttft, FirstContent: f.ttft, LastToken: total, End: total})
	rec.EndOffsetSeconds = rec.StartOffsetSeconds + total.Seconds()
	time.Sleep(500 * time.Microsecond)
	return rec
}

type noPrompts struct{}

func (noPrompts) Prompt(context.Context, int64, int) (string, error) { return "x", nil }

// rig is a coordinator and its workers over in-memory connections (run it in a synctest
// bubble).
type rig struct {
	t      *testing.T
	c      *Coordinator
	ln     *simtest.PipeListener
	srv    *fakeServer
	origin time.Time
	wg     sync.WaitGroup
	logs   []string
	mu     sync.Mutex
}

func newRig(t *testing.T) *rig {
	origin := time.Now()
	r := &rig{t: t, ln: newPipeListener(), origin: origin,
		srv: &fakeServer{origin: origin, ttft: 50 * time.Millisecond, perTok: 10 * time.Millisecond}}
	r.c = &Coordinator{Token: testToken, Plan: servebench.Plan{}, Marker: "m", Origin: origin, MinWorkers: 1, Rejoin: time.Second,
		Logf: r.logf}
	r.c.Serve(t.Context(), r.ln)
	t.Cleanup(func() { r.c.Close(); r.ln.Close(); r.wg.Wait() })
	return r
}

func (r *rig) logf(format string, args ...any) {
	r.mu.Lock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// honest starts a real Worker against the fake server.
func (r *rig) honest(name string) {
	w := &Worker{Token: testToken, Name: name, Dial: dialer(r.ln), ConnectTimeout: time.Minute, Logf: r.logf,
		Open: func(ctx context.Context, plan servebench.Plan, marker string) (*Target, error) {
			return &Target{Client: r.srv, Prompts: noPrompts{}, Origin: r.origin}, nil
		}}
	r.wg.Go(func() { _ = w.Run(r.t.Context()) })
}

// spec is a sustained cell of concurrency n that stops after min measured requests.
func (r *rig) spec(n, min int) load.Spec {
	return load.Spec{Key: servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 64, OutputTokens: 16, Concurrency: n},
		Sizing: load.Sizing{MinRequests: min, Rounds: 1}, NextSeq: new(atomic.Int64),
		Clock: func() time.Duration { return time.Since(r.origin) }}
}

// sinkInto collects the records of a cell.
type sinkInto struct {
	mu   sync.Mutex
	recs []servebench.Record
}

func (s *sinkInto) sink(rec servebench.Record) {
	s.mu.Lock()
	s.recs = append(s.recs, rec)
	s.mu.Unlock()
}

func (s *sinkInto) by(worker string) []servebench.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []servebench.Record
	for _, r := range s.recs {
		if r.Worker == worker {
			out = append(out, r)
		}
	}
	return out
}

// rogue speaks the protocol by hand: it passes the handshake with the token, answers pings,
// and does what act says with each cell's order.
type rogue struct {
	p     *peer
	name  string
	clk   clock
	cells chan order
	stops chan string // "stop", "abort", "burst"
}

func (r *rig) rogue(name string, act func(g *rogue, o order)) *rogue {
	conn, err := r.ln.DialContext(r.t.Context(), "", "")
	if err != nil {
		r.t.Fatal(err)
	}
	g := &rogue{p: newPeer(conn, maxMessageBytes), name: name, clk: clock{origin: r.origin}, cells: make(chan order, 4), stops: make(chan string, 16)}
	mine := nonce()
	must := func(err error) {
		if err != nil {
			r.t.Fatal(err)
		}
	}
	must(g.p.send(msg{T: tHello, Name: name, Nonce: mine}))
	ch, err := g.p.recv()
	must(err)
	must(g.p.send(msg{T: tAuth, MAC: proof(testToken, "worker", ch.Nonce, mine)}))
	wel, err := g.p.recv()
	must(err)
	if wel.T != tWelcome {
		r.t.Fatalf("rogue %s not welcome: %+v", name, wel)
	}
	must(g.p.send(msg{T: tReady, Origin: r.origin.UnixNano()}))
	r.wg.Go(func() {
		for {
			m, err := g.p.recv()
			if err != nil {
				close(g.stops)
				return
			}
			switch m.T {
			case tPing:
				t := g.clk.now()
				_ = g.p.send(msg{T: tPong, ID: m.ID, T1: m.T1, T2: t, T3: t})
			case tCell:
				o := *m.Order
				r.wg.Go(func() { act(g, o) })
			case tStop, tAbort, tBurst:
				select {
				case g.stops <- m.T:
				default:
				}
			}
		}
	})
	return g
}

// seq is the order's j-th sequence number.
func (o order) seq(j int) int64 { return o.SeqBase + int64(o.Slot) + int64(o.Stride)*int64(j) }

// record is an honest-looking record of the order's j-th request, started at (s from the
// origin) and lasting e2e seconds.
func (g *rogue) record(o order, j int, at, e2e float64) servebench.Record {
	out := o.Key.OutputTokens
	rec := servebench.Record{CellKey: o.Key, Seq: o.seq(j), Worker: g.name, Warmup: j < o.Share, StartOffsetSeconds: at, EndOffsetSeconds: at + e2e,
		InputTokens: o.Key.ContextTokens, InputTokensRequested: o.Key.ContextTokens, OutputTokens: out, OutputTokensRequested: out, Chunks: out,
		InputTokensSource: servebench.SourceUsage, OutputTokensSource: servebench.SourceUsage}
	servebench.Derive(&rec, servebench.Timing{FirstToken: time.Duration(e2e * 0.2 * 1e9), LastToken: time.Duration(e2e * 1e9), End: time.Duration(e2e * 1e9)})
	return rec
}

// send announces the request of rec (with warm flag) and then sends rec.
func (g *rogue) send(rec servebench.Record) {
	_ = g.p.send(msg{T: tStarted, Seq: rec.Seq, Warm: rec.Warmup, At: rec.StartOffsetSeconds})
	_ = g.p.send(msg{T: tRecord, Rec: &rec})
}
