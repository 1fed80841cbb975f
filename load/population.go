package load

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
)

// UserTurn is one turn of a user's conversation: the new text it adds (tokens), the answer it
// asks for (tokens) and the think time before it (after the previous answer ended).
type UserTurn struct {
	NewTokens, OutputTokens int
	Think                   time.Duration
	// Text and Answer, when set, are the turn's new text and (in a joining user's history) its
	// answer, sent as written instead of Population.Text's: a dataset's conversation, a trace's
	// shared blocks. Lead, on a conversation's first turn, opens the conversation (a system
	// message).
	Text, Answer string
	Lead         []servebench.Message
}

// Population drives a ModeUsers cell: Spec.Key.Concurrency users, each a conversation that
// proceeds on its own.
type Population struct {
	// Session draws user u's next conversation (u from 0). joining is true for each user's
	// first conversation, which the user joins at turn join: the turns before it are history,
	// sent with it as one prompt (the conversation so far, with answers of their lengths). A
	// later conversation starts at its first turn (join is ignored).
	Session func(u int, joining bool) (turns []UserTurn, join int)
	// Text builds new text of tokens tokens; key distinguishes the texts of one request (0 its
	// new text, k > 0 the k-th text of a joining user's history).
	Text func(ctx context.Context, seq int64, key, tokens int) (string, error)
	// Stagger spreads the users' first sends evenly over [0, Stagger).
	Stagger time.Duration
}

// population runs a population of users (see Population). Each user loops: send a turn (the
// whole history and the turn's new text), wait for the answer, think, send the next turn with
// the answer as it arrived; when a conversation's turns end, or a turn fails, a new conversation
// takes its place, so the population stays at N users. A user's requests never overlap.
//
// The users join conversations already in progress at mixed depths (Population.Session), at
// staggered times, so the mix of depths is steady from the start; what the warm-up waits for is
// the server's prefix cache: the joining turn is a cold prompt. The measured window opens when
// every user's joining turn has been answered, or at the 2N-th completion if that comes first
// (in practice the 2N-th: a joining turn with a long answer); requests sent before are warm-up.
// (It does not open at each joining turn's first token, when every history has been prefilled:
// past the KV cache the population is then still in a transient, half its prompt tokens still
// served from the cache, and only a round later thrashes. On the H200 simulator 244 chat users
// measured 17.6 tok/s per user from there, 15.4 from the 2N-th completion.) From then on each
// send asks the same rule as a sustained cell (Spec.Sizing with Spec.Judge, or Spec.Until)
// whether more is needed, with N the number of users; the window ends the first time a user is
// told no. Once it has ended and every measured request has too, warm-up requests still running
// (a joining turn's long answer) are canceled: they are not measured, and a straggler held the
// level open 20–25 s past its last measured request at 46–52 coding agents; and a user thinking
// when the window ends returns at once (its think time held a level of 229 chat users 23 s past
// its last request).
func (d *driver) population(ctx context.Context) (Outcome, error) {
	n := d.spec.Key.Concurrency
	pop := d.spec.Population
	if pop == nil || pop.Session == nil || pop.Text == nil {
		return Outcome{}, errors.New("load: users mode needs a Population with Session and Text")
	}
	var mu sync.Mutex
	var windowStart, windowEnd atomic.Value // float64
	completions := 0                        // requests finished, warm-up included
	joined := 0                             // users whose joining turn has been answered
	measured := 0
	running := 0 // measured requests sent and not yet ended
	// warmCtx carries the warm-up requests: canceled once the window has ended and its measured
	// requests with it.
	warmCtx, cancelWarm := context.WithCancel(ctx)
	defer cancelWarm()
	// over is closed once the window has ended (stopped): a user thinking then has nothing
	// more to send and returns at once, instead of holding the cell for the rest of its think
	// time (up to 75 s at a quarter of the chat user's).
	over := make(chan struct{})
	stop := sync.OnceFunc(func() { close(over) })
	var e2eSum float64
	var e2eN int
	stopped := false
	// more reports whether a user may send (and whether its request is warm-up).
	more := func() (warm, ok bool) {
		if ctx.Err() != nil {
			return false, false
		}
		mu.Lock()
		defer mu.Unlock()
		ws, open := windowStart.Load().(float64)
		if !open {
			return true, true
		}
		if stopped {
			return false, false
		}
		if d.expired() {
			stopped = true
			stop()
			if running == 0 {
				cancelWarm()
			}
			return false, false
		}
		if stopped = d.enough(n, ws, measured, e2eSum, e2eN); !stopped {
			measured++
			running++
		} else {
			stop()
			if running == 0 {
				cancelWarm()
			}
		}
		return false, !stopped
	}
	finished := func(rec servebench.Record, first bool) {
		mu.Lock()
		defer mu.Unlock()
		if !rec.Warmup && rec.OK() {
			e2eSum += rec.E2ELatencySeconds
			e2eN++
		}
		if !rec.Warmup {
			running--
			if stopped && running == 0 {
				cancelWarm()
			}
		}
		if first {
			joined++
		}
		completions++
		if _, open := windowStart.Load().(float64); !open && (joined == n || completions == 2*n) {
			at := d.now()
			windowStart.Store(at)
			if d.spec.WindowOpened != nil {
				d.spec.WindowOpened(at)
			}
		}
	}
	sleep := func(wait time.Duration) bool {
		if wait <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-over:
			return false
		case <-t.C:
			return true
		}
	}
	user := func(u int) {
		defer func() { windowEnd.CompareAndSwap(nil, d.now()) }()
		if !sleep(time.Duration(int64(pop.Stagger) * int64(u) / int64(n))) {
			return
		}
		first := true // the user's joining turn, until answered
		for joining := true; ; joining = false {
			turns, join := pop.Session(u, joining)
			if !joining || join < 0 || join >= len(turns) {
				join = 0
			}
			var hist []servebench.Message
			for t := join; t < len(turns); t++ {
				if t > join && !sleep(turns[t].Think) {
					return
				}
				warm, ok := more()
				if !ok {
					return
				}
				seq := d.spec.NextSeq.Add(1) - 1
				msgs, err := d.turnMessages(ctx, seq, hist, turns, join, t)
				if err != nil {
					if ctx.Err() == nil {
						d.fail(err)
					}
					return
				}
				answer := new(strings.Builder)
				key := d.spec.Key
				key.Turn = t + 1
				req := &servebench.Request{Cell: key, Seq: seq, Warmup: warm, Messages: msgs, MaxOutputTokens: turns[t].OutputTokens, Answer: answer}
				rctx := ctx
				if warm {
					rctx = warmCtx
				}
				rec := d.send(rctx, req, u+1)
				finished(rec, first)
				first = false
				if !rec.OK() {
					break // the user gives up this conversation; a new one takes its place
				}
				hist = append(msgs, servebench.Message{Role: "assistant", Content: answer.String()})
			}
		}
	}
	var wg sync.WaitGroup
	for u := range n {
		wg.Go(func() { user(u) })
	}
	wg.Wait()
	out := d.result()
	if ws, ok := windowStart.Load().(float64); ok {
		out.WindowStart = ws
	}
	if we, ok := windowEnd.Load().(float64); ok {
		out.WindowEnd = we
	}
	return out, d.err
}

// turnMessages is what turn t of a conversation sends: the history so far (for the conversation's
// first turn sent, its lead and, for a user who joins at turn join > 0, the earlier turns' texts
// with answers, as given or of their lengths, built here) and the turn's new text.
func (d *driver) turnMessages(ctx context.Context, seq int64, hist []servebench.Message, turns []UserTurn, join, t int) ([]servebench.Message, error) {
	text := func(given string, key, tokens int) (string, error) {
		if given != "" {
			return given, nil
		}
		return d.spec.Population.Text(ctx, seq, key, tokens)
	}
	msgs := hist
	if t == join {
		msgs = make([]servebench.Message, 0, len(turns[0].Lead)+2*join+1)
		msgs = append(msgs, turns[0].Lead...)
		for k := range join {
			q, err := text(turns[k].Text, 2*k+1, turns[k].NewTokens)
			if err != nil {
				return nil, err
			}
			a, err := text(turns[k].Answer, 2*k+2, turns[k].OutputTokens)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, servebench.Message{Role: "user", Content: q}, servebench.Message{Role: "assistant", Content: a})
		}
	}
	q, err := text(turns[t].Text, 0, turns[t].NewTokens)
	if err != nil {
		return nil, err
	}
	return append(msgs[:len(msgs):len(msgs)], servebench.Message{Role: "user", Content: q}), nil
}

// send sends a request built whole and sinks its record (user u, from 1, sent it).
func (d *driver) send(ctx context.Context, req *servebench.Request, u int) servebench.Record {
	d.mu.Lock()
	d.out.Sent++
	if req.Warmup {
		d.out.Warmup++
	}
	d.mu.Unlock()
	rec := d.client.Do(ctx, req)
	rec.User = u
	if d.done != nil {
		d.done(rec)
	}
	d.sink(rec)
	return rec
}
