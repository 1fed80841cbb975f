// Package selfcheck measures whether this machine can measure a planned load: it streams the
// load from a zero-latency server inside this process to servebench's own client, and reports
// the client's stamp error (first-token stamp − the moment the server's write returned), the
// Go scheduler's latency and the CPU the process used. The server sharing the process makes the
// check pessimistic: a real run carries only the client.
package selfcheck

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/host"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/stats"
)

// Limits a load must stay within to be measurable: stamp error and scheduler latency at p99
// (seconds), and the share of the machine's CPU the process may use.
const (
	MaxStampErrorSeconds = 0.001
	MaxSchedSeconds      = 0.001
	MaxCPUShare          = 0.7
)

// eventsPerStream is the number of token events in each response.
const eventsPerStream = 16

// Config is the load to check.
type Config struct {
	// Concurrency is the number of streams in flight; EventsPerSecond the token events per
	// second over all of them.
	Concurrency     int
	EventsPerSecond float64
	// Duration is how long the load is measured (default 5 s), after a warm-up of one request
	// per stream.
	Duration time.Duration
}

// Result is what the check saw.
type Result struct {
	Config
	ClockSource string
	// WarmupSeconds is how long the warm-up took: every stream's first request, the streams
	// starting evenly spread over one request's length (the window opens when the last of them
	// ends, as a sustained cell's does).
	WarmupSeconds float64
	// Requests measured (their first token written inside the window), and the events per
	// second the server wrote inside it.
	Requests             int
	AchievedEventsPerSec float64
	// StampError summarises first-token stamp − the server's post-write time (s), over the
	// measured requests; WarmupStampError over the warm-up's, which are not judged (the process
	// starts its threads and grows its stacks and heap meanwhile). When a read comes later than
	// the stream's next event, the kernel stamps the coalesced read with the newer arrival, and
	// the error is a whole number of event gaps.
	StampError       servebench.Summary
	WarmupStampError servebench.Summary
	// Lag summarises, over the measured requests, the user-space time of the read that delivered
	// the first token − its kernel stamp (Record.ClientLagSeconds): how far behind the socket the
	// client read. Coalesced counts the measured first tokens read only after their stream's next
	// event had arrived (stamp error of half a gap or more): their reads took both events, under
	// the later one's stamp.
	Lag       servebench.Summary
	Coalesced int
	// Sched is the scheduler latency and CPUShare (process CPU time / (wall time × cores); -1
	// when unknown) the process's CPU, inside the window.
	Sched    servebench.HistogramSummary
	CPUShare float64
	// Rescues counts, inside the window, the reactor's safety net finding bytes (or a nap's end)
	// that its wake-ups had left waiting for 10 ms or more (openai.ReactorRescues): a lost
	// wake-up, or a reactor not run for that long.
	Rescues int64
	// OK says whether this machine can measure the load; Problems says why not.
	OK       bool
	Problems []string
}

// Run runs the check.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Concurrency < 1 || cfg.EventsPerSecond <= 0 {
		return Result{}, fmt.Errorf("selfcheck needs --concurrency ≥ 1 and --events-per-second > 0 (got %d and %g)", cfg.Concurrency, cfg.EventsPerSecond)
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 5 * time.Second
	}
	if err := host.EnsureOpenFiles(2*cfg.Concurrency + host.SpareFiles); err != nil {
		return Result{}, err
	}
	gap := time.Duration(float64(cfg.Concurrency) / cfg.EventsPerSecond * float64(time.Second))
	h, err := open(ctx, gap, cfg.Concurrency)
	if err != nil {
		return Result{}, err
	}
	defer h.close()
	srv := h.srv
	res := Result{Config: cfg, ClockSource: h.c.ClockSource(), CPUShare: -1}
	var mu sync.Mutex
	var recs, warm []servebench.Record
	var w0, w1 snapshot
	h.drive(ctx, cfg.Concurrency, cfg.Duration, func(rec servebench.Record, warmup bool) {
		mu.Lock()
		if warmup {
			warm = append(warm, rec)
		} else {
			recs = append(recs, rec)
		}
		mu.Unlock()
	}, func(end bool) {
		if end {
			w1 = h.snap()
		} else {
			w0 = h.snap()
		}
	})
	if err := ctx.Err(); err != nil {
		return res, err
	}
	wall := w1.at.Sub(w0.at)
	res.WarmupSeconds = w0.at.Sub(h.start).Seconds()
	res.Sched = stats.HistogramSummarize(stats.HistogramDelta(w0.sched, w1.sched))
	res.Rescues = w1.rescues - w0.rescues
	if w0.cpuOK && w1.cpuOK && wall > 0 {
		res.CPUShare = (w1.cpu - w0.cpu).Seconds() / (wall.Seconds() * float64(runtime.GOMAXPROCS(0)))
	}
	if wall > 0 {
		res.AchievedEventsPerSec = float64(w1.events-w0.events) / wall.Seconds()
	}
	// Each first token's stamp error, of the requests whose first token the server wrote inside
	// the window (measured) and of the warm-up requests (reported apart).
	var lags []float64
	stampErrs := func(recs []servebench.Record, inWindow bool) ([]float64, error) {
		var errs []float64
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for i := range recs {
			r := &recs[i]
			if !r.OK() {
				return nil, fmt.Errorf("selfcheck request failed: %s (%s)", r.Error, r.ErrorClass)
			}
			w, ok := srv.written[r.ResponseID]
			if !ok || inWindow && (w < w0.at.UnixNano() || w > w1.at.UnixNano()) {
				continue
			}
			stamp := float64(r.StartUnixNano) + r.TTFTSeconds*1e9
			errs = append(errs, (stamp-float64(w))/1e9)
			if inWindow {
				if stamp-float64(w) >= float64(gap/2) {
					res.Coalesced++
				}
				if r.ClientLagSeconds != nil {
					lags = append(lags, *r.ClientLagSeconds)
				}
			}
		}
		slices.Sort(errs)
		return errs, nil
	}
	errs, err := stampErrs(recs, true)
	if err != nil {
		return res, err
	}
	werrs, err := stampErrs(warm, false)
	if err != nil {
		return res, err
	}
	res.Requests = len(errs)
	res.WarmupStampError = stats.Summarize(werrs)
	res.StampError = stats.Summarize(errs)
	slices.Sort(lags)
	res.Lag = stats.Summarize(lags)
	res.OK = true
	var p99 float64
	if res.StampError.Max != nil {
		p99 = *res.StampError.Max
	}
	if res.StampError.P99 != nil {
		p99 = *res.StampError.P99
	}
	ms := func(s float64) string { return fmt.Sprintf("%.2f ms", s*1000) }
	if res.Requests == 0 {
		res.OK = false
		res.Problems = append(res.Problems, fmt.Sprintf("no first token was written inside the %s measured: run it longer (--duration)", cfg.Duration))
	}
	if p99 > MaxStampErrorSeconds {
		res.OK = false
		res.Problems = append(res.Problems, fmt.Sprintf("first-token stamps trail the server's writes by %s at p99 (limit %s)", ms(p99), ms(MaxStampErrorSeconds)))
	}
	if res.Sched.P99 > MaxSchedSeconds {
		res.OK = false
		res.Problems = append(res.Problems, fmt.Sprintf("goroutines waited %s to run at p99 (limit %s): the CPU is short", ms(res.Sched.P99), ms(MaxSchedSeconds)))
	}
	if res.Rescues > 0 {
		res.OK = false
		res.Problems = append(res.Problems, fmt.Sprintf("the reader's safety net found unread bytes %d times (wake-ups lost, or the reader not run for 10 ms)", res.Rescues))
	}
	if res.CPUShare > MaxCPUShare {
		res.OK = false
		res.Problems = append(res.Problems, fmt.Sprintf("the process used %.0f%% of the machine's CPU (limit %.0f%%)", res.CPUShare*100, MaxCPUShare*100))
	}
	if res.AchievedEventsPerSec < 0.9*cfg.EventsPerSecond {
		res.OK = false
		res.Problems = append(res.Problems, fmt.Sprintf("only %.0f of the planned %.0f events/s were delivered", res.AchievedEventsPerSec, cfg.EventsPerSecond))
	}
	return res, nil
}

// server streams eventsPerStream token events per request, gap apart, and notes when the
// write of each first token returned.
type server struct {
	gap     time.Duration
	n       atomic.Int64
	events  atomic.Int64 // token events written
	mu      sync.Mutex
	written map[string]int64 // response id → unix ns after the first token's write
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"selfcheck","object":"model"}]}`))
		return
	}
	id := fmt.Sprintf("sc-%d", s.n.Add(1))
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	event := []byte(`data: {"id":"` + id + `","choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n")
	next := time.Now()
	for i := range eventsPerStream {
		if i > 0 {
			next = next.Add(s.gap)
			time.Sleep(time.Until(next))
		}
		_, _ = w.Write(event)
		fl.Flush()
		s.events.Add(1)
		if i == 0 {
			t := time.Now().UnixNano()
			s.mu.Lock()
			s.written[id] = t
			s.mu.Unlock()
		}
	}
	fmt.Fprintf(w, "data: {\"id\":\"%s\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", id, eventsPerStream)
}

// Carry estimates how many stream events per second this machine's client can read with its
// timing intact: 64 streams from the in-process server, each event 4 ms after the previous one
// (so that every event is a read of its own, as from a real server, not a burst the client
// reads in one go), for d (default 500 ms); Carry = events read / CPU seconds the process used
// × cores × MaxCPUShare (events/s). The server's own cost counts against the client here, so
// the estimate is low rather than high; `servebench selfcheck` checks one load exactly.
func Carry(ctx context.Context, d time.Duration) (float64, error) {
	if d <= 0 {
		d = 500 * time.Millisecond
	}
	const streams = 64
	h, err := open(ctx, 4*time.Millisecond, streams)
	if err != nil {
		return 0, err
	}
	defer h.close()
	cpu0, ok := host.CPUTime()
	if !ok {
		return 0, fmt.Errorf("this system does not report the process's CPU time")
	}
	var events atomic.Int64
	h.drive(ctx, streams, d, func(rec servebench.Record, _ bool) { events.Add(int64(rec.Chunks)) }, nil)
	cpu1, _ := host.CPUTime()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	used := (cpu1 - cpu0).Seconds()
	if used <= 0 || events.Load() == 0 {
		return 0, fmt.Errorf("no events read in %s", d)
	}
	return float64(events.Load()) / used * float64(runtime.GOMAXPROCS(0)) * MaxCPUShare, nil
}

// harness is the in-process server and servebench's client reading it, connections open.
type harness struct {
	srv   *server
	hs    *http.Server
	c     *openai.Client
	start time.Time // when drive started
}

// snapshot is the process's state at one end of a measured window.
type snapshot struct {
	at     time.Time
	sched  servebench.Histogram
	cpu    time.Duration
	cpuOK  bool
	events int64 // the server's events written
	// rescues is openai.ReactorRescues.
	rescues int64
}

func (h *harness) snap() snapshot {
	s := snapshot{at: time.Now(), sched: host.SchedLatency(), events: h.srv.events.Load(), rescues: openai.ReactorRescues()}
	s.cpu, s.cpuOK = host.CPUTime()
	return s
}

// open starts a server whose events are gap apart and a client with streams connections.
func open(ctx context.Context, gap time.Duration, streams int) (*harness, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &harness{srv: &server{gap: gap, written: map[string]int64{}}, start: time.Now()}
	h.hs = &http.Server{Handler: h.srv}
	go func() { _ = h.hs.Serve(ln) }()
	h.c, err = openai.New(openai.Config{BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "selfcheck", MaxConnections: streams})
	if err == nil {
		_, err = h.c.Prewarm(ctx, streams)
	}
	if err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

func (h *harness) close() {
	if h.c != nil {
		h.c.Close()
	}
	_ = h.hs.Close()
}

// drive keeps streams requests in flight, handing each record to each (from several goroutines)
// with whether it was a warm-up request (a stream's first). The streams start evenly spread
// over one request's length (eventsPerStream gaps), so that requests start and end, and first
// tokens arrive, evenly over time at the planned rate, as in a long run whose requests differ
// in length, rather than in waves of every stream at once (which the identical requests here
// would keep up). The window opens when the last warm-up request ends and closes d later;
// window (when set) is called at each end (end false, then true). Each stream sends its next
// request the moment its previous one ends, until the window has closed (or ctx ends).
func (h *harness) drive(ctx context.Context, streams int, d time.Duration, each func(servebench.Record, bool), window func(end bool)) {
	h.start = time.Now()
	var warmed atomic.Int64
	closed := make(chan struct{})
	spread := time.Duration(eventsPerStream) * h.srv.gap
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			select {
			case <-time.After(time.Until(h.start.Add(spread * time.Duration(i) / time.Duration(streams)))):
			case <-ctx.Done():
			}
			for warmup := true; ctx.Err() == nil; warmup = false {
				select {
				case <-closed:
					return
				default:
				}
				each(h.c.Do(ctx, &servebench.Request{Prompt: "selfcheck", ContextTokens: 1, MaxOutputTokens: eventsPerStream}), warmup)
				if warmup && warmed.Add(1) == int64(streams) {
					if window != nil {
						window(false)
					}
					time.AfterFunc(d, func() {
						if window != nil {
							window(true)
						}
						close(closed)
					})
				}
			}
		})
	}
	wg.Wait()
}

// SearchConfig is the range of loads Search tries.
type SearchConfig struct {
	// From and UpTo bound the stream counts tried (doubling from From; defaults 16 and 4,096).
	From, UpTo int
	// PerStream is each stream's events per second (default 5: 4,096 streams make 20,480
	// events/s, a server decoding at 200 ms per token per stream, or at 20 ms per token for
	// 410 streams).
	PerStream float64
	// Step is how long each load runs (default 3 s).
	Step time.Duration
	// Progress, when set, is told each load's result as it ends.
	Progress func(Result)
}

// SearchResult is what Search found.
type SearchResult struct {
	// Steps are the loads tried, in order.
	Steps []Result
	// Held is the largest load this machine measured within every limit (nil: not even the
	// first); Failed the first it did not (nil: every load up to UpTo held).
	Held, Failed *Result
}

// Search finds how many streams, and so how many events per second, this machine can measure
// to the millisecond: it runs the check (Run) at From streams, then twice as many each time,
// each stream at PerStream events/s, and stops at the first load that breaks a limit (first-token
// stamp error or scheduler latency over 1 ms at p99, CPU over MaxCPUShare, events not
// delivered) or after UpTo streams.
func Search(ctx context.Context, cfg SearchConfig) (SearchResult, error) {
	if cfg.From <= 0 {
		cfg.From = 16
	}
	if cfg.UpTo <= 0 {
		cfg.UpTo = 4096
	}
	if cfg.PerStream <= 0 {
		cfg.PerStream = 5
	}
	if cfg.Step <= 0 {
		cfg.Step = 3 * time.Second
	}
	if cfg.From > cfg.UpTo {
		return SearchResult{}, fmt.Errorf("selfcheck search: --from %d is above --up-to %d", cfg.From, cfg.UpTo)
	}
	var out SearchResult
	for n := cfg.From; ; n *= 2 {
		n = min(n, cfg.UpTo)
		res, err := Run(ctx, Config{Concurrency: n, EventsPerSecond: float64(n) * cfg.PerStream, Duration: cfg.Step})
		if err != nil {
			return out, err
		}
		out.Steps = append(out.Steps, res)
		if cfg.Progress != nil {
			cfg.Progress(res)
		}
		r := &out.Steps[len(out.Steps)-1]
		if !res.OK {
			out.Failed = r
			return out, nil
		}
		out.Held = r
		if n == cfg.UpTo {
			return out, nil
		}
	}
}
