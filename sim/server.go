package sim

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/servebench/servebench"
)

// Options tune a Server.
type Options struct {
	// RequestMetrics adds vLLM's RequestMetrics object ("metrics") to the last chunk of each
	// response (the usage chunk when usage is requested, else the chunk with finish_reason) and
	// to non-streaming responses.
	RequestMetrics bool
	// Seed picks the natural output lengths, generated words and response ids.
	Seed int64
	// ServedModelName is the model id; empty means the profile's Model.Name.
	ServedModelName string
	// ReasoningTokens > 0 makes the model reason before it answers: the first ReasoningTokens
	// generated tokens of a chat response stream as reasoning deltas, the rest as content (all of
	// them count in usage.completion_tokens; usage.completion_tokens_details.reasoning_tokens
	// says how many reasoned). 0 takes the profile's Model.ReasoningTokens.
	ReasoningTokens int
	// ReasoningField names the delta field of reasoning text: "reasoning_content" (DeepSeek's API
	// and vLLM's reasoning parsers, the default) or "reasoning" (newer vLLM, OpenRouter).
	ReasoningField string
	// UncountedMetrics keeps /metrics from counting finished requests: the request histograms
	// (queue, prefill, decode, TTFT, end-to-end …) and request_success_total never move, as
	// behind a gateway that exposes its own metrics in front of other replicas. Token, cache and
	// load series move as usual.
	UncountedMetrics bool
}

// Reasoning delta field names (Options.ReasoningField).
const (
	ReasoningFieldContent = "reasoning_content"
	ReasoningFieldShort   = "reasoning"
)

// Server is the simulated engine behind an OpenAI-compatible HTTP API. Create it with New, call
// Start to run the step loop, serve Handler, and Close when done.
type Server struct {
	p     Profile
	o     Options
	model string

	origin     time.Time // engine clock zero (monotonic)
	originUnix float64   // unix seconds at origin

	mu     sync.Mutex // guards c, nextID and every seq's fields
	c      *core
	nextID uint64

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	mux    *http.ServeMux
}

// New builds a server for p. MaxModelLen is lowered to the KV-cache capacity when that is
// smaller (vLLM refuses to start instead). New panics when p.Validate fails; check custom
// profiles with Validate first.
func New(p Profile, o Options) *Server {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	if o.ReasoningTokens <= 0 {
		o.ReasoningTokens = p.Model.ReasoningTokens
	}
	if o.ReasoningField != ReasoningFieldShort {
		o.ReasoningField = ReasoningFieldContent
	}
	if c := p.KVCapacityTokens(); p.Engine.MaxModelLen > c {
		p.Engine.MaxModelLen = c
	}
	model := o.ServedModelName
	if model == "" {
		model = p.Model.Name
	}
	now := time.Now()
	s := &Server{
		p: p, o: o, model: model,
		origin: now, originUnix: float64(now.UnixNano()) / 1e9,
		c:    newCore(p, model),
		wake: make(chan struct{}, 1),
	}
	s.c.metrics.uncounted = o.UncountedMetrics
	s.mux = http.NewServeMux()
	s.routes()
	return s
}

// Profile returns the profile the server runs (MaxModelLen possibly lowered by New).
func (s *Server) Profile() Profile { return s.p }

// ModelName returns the served model id.
func (s *Server) ModelName() string { return s.model }

// Start runs the step loop until ctx ends or Close is called. Call it once.
func (s *Server) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.loop(ctx)
	}()
}

// Close stops the step loop and waits for it. Streams still open end when their clients go.
func (s *Server) Close() {
	s.once.Do(func() {
		if s.cancel != nil {
			s.cancel()
			<-s.done
		}
	})
}

// Handler serves every endpoint on one mux.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Identify the simulator on the wire, so a run against it by URL is marked SIMULATED
		// whatever its plan declares about the hardware. Generation responses are left as the
		// engine it mimics sends them (their timing is what is measured).
		if r.Method == http.MethodGet || r.URL.Path == "/tokenize" {
			w.Header().Set(servebench.SimulatedHeader, "servebench-sim; profile="+s.p.Name)
		}
		s.mux.ServeHTTP(w, r)
	})
}

// Truth returns the cumulative truth, with idle energy charged up to now.
func (s *Server) Truth() Truth {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.c.hasWork() {
		s.c.idleUntil(s.simNow())
	}
	return s.c.truth
}

// simNow is the wall clock as engine seconds.
func (s *Server) simNow() float64 { return time.Since(s.origin).Seconds() }

func (s *Server) unix(t float64) float64 { return s.originUnix + t }

func (s *Server) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop is the one goroutine that runs steps. Each step's end is the previous end plus the
// computed duration; the loop sleeps until that deadline (never when behind, so no drift
// accumulates), then makes the step's tokens visible to the streams.
func (s *Server) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var touched []*seq
	for {
		s.mu.Lock()
		if !s.c.hasWork() {
			s.c.idleUntil(s.simNow())
			s.mu.Unlock()
			select {
			case <-s.wake:
			case <-ctx.Done():
				return
			}
			s.mu.Lock()
			s.c.idleUntil(s.simNow())
			s.mu.Unlock()
			continue
		}
		_, ok := s.c.step()
		touched = append(touched[:0], s.c.touched...)
		end := s.c.now
		s.mu.Unlock()
		if !ok {
			// Work exists but nothing fits (cannot happen with a valid profile); do not spin.
			timer.Reset(10 * time.Millisecond)
			select {
			case <-timer.C:
			case <-s.wake:
				if !timer.Stop() {
					<-timer.C
				}
			case <-ctx.Done():
				return
			}
			s.mu.Lock()
			s.c.idleUntil(s.simNow())
			s.mu.Unlock()
			continue
		}
		if d := time.Until(s.origin.Add(time.Duration(end * float64(time.Second)))); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return
			}
		}
		s.mu.Lock()
		for _, q := range touched {
			q.visibleTokens = q.generated
			if q.done && !q.doneClosed {
				q.visibleDone, q.doneClosed = true, true
				close(q.doneCh)
			}
			select {
			case q.notify <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
	}
}

// ---- identifiers and generated text ----

// mix64 is SplitMix64's finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// words are the generated tokens: each is " word", exactly one token by the sim's tokenizer.
var words = []string{"the", "model", "answer", "token", "stream", "batch", "cache", "prefill", "decode",
	"queue", "speed", "power", "memory", "context", "request", "server", "engine", "latency", "user",
	"block", "step", "time", "value", "system", "result", "data", "report", "signal", "graph", "load",
	"chunk", "capacity", "simulated", "and", "of", "to", "in", "is", "for", "with", "on", "at", "by",
	"from", "as", "it", "that", "this", "we", "a", "an", "be", "are", "was", "will", "can", "more",
	"less", "fast", "slow", "high", "low", "first", "last"}

func (s *Server) word(q *seq, k int) string {
	return words[mix64(uint64(s.o.Seed)^q.id*0x9e3779b97f4a7c15^uint64(k))%uint64(len(words))]
}

// text returns the generated tokens [from, to) of q.
func (s *Server) text(q *seq, from, to int) string {
	b := make([]byte, 0, (to-from)*8)
	for k := from; k < to; k++ {
		b = append(b, ' ')
		b = append(b, s.word(q, k)...)
	}
	return string(b)
}

// naturalLength picks the output length when the request may stop early: deterministic per
// seed, prompt and limits, uniform in [lo, hi].
func naturalLength(seed int64, promptHash uint64, lo, hi int) int {
	if hi <= lo {
		return hi
	}
	h := mix64(uint64(seed) ^ mix64(promptHash) ^ uint64(hi)<<20 ^ uint64(lo))
	return lo + int(h%uint64(hi-lo+1))
}

// requestMetrics is vLLM's RequestMetrics (unix seconds).
type requestMetrics struct {
	ArrivalTime        float64 `json:"arrival_time"`
	LastTokenTime      float64 `json:"last_token_time"`
	FirstScheduledTime float64 `json:"first_scheduled_time"`
	FirstTokenTime     float64 `json:"first_token_time"`
	TimeInQueue        float64 `json:"time_in_queue"`
	FinishedTime       float64 `json:"finished_time"`
}

func (s *Server) requestMetrics(q *seq) *requestMetrics {
	if !s.o.RequestMetrics {
		return nil
	}
	return &requestMetrics{
		ArrivalTime:        s.unix(q.arrival),
		LastTokenTime:      s.unix(q.finished),
		FirstScheduledTime: s.unix(q.firstScheduled),
		FirstTokenTime:     s.unix(q.firstToken),
		TimeInQueue:        q.firstScheduled - q.ready,
		FinishedTime:       s.unix(q.finished),
	}
}

func (s *Server) responseID(prefix string, q *seq) string {
	a := mix64(uint64(s.o.Seed) ^ q.id)
	b := mix64(a ^ uint64(s.origin.UnixNano()))
	return fmt.Sprintf("%s%016x%016x", prefix, a, b)
}
