package dist

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
)

// Message types.
const (
	tHello     = "hello"     // worker → coordinator: name, host, nonce
	tChallenge = "challenge" // coordinator → worker: its nonce (and nothing that depends on the token)
	tAuth      = "auth"      // worker → coordinator: its proof of the token over both nonces
	tWelcome   = "welcome"   // coordinator → worker: its own proof, the plan and prompt marker
	tRefused   = "refused"   // coordinator → worker: why it is not accepted
	tReady     = "ready"     // worker → coordinator: its clock origin (or why it cannot measure)
	tPing      = "ping"      // coordinator → worker: T1
	tPong      = "pong"      // worker → coordinator: T1, T2, T3
	tCell      = "cell"      // coordinator → worker: an order
	tStarted   = "started"   // worker → coordinator: a request was sent
	tRecord    = "record"    // worker → coordinator: a request ended
	tWarm      = "warm"      // worker → coordinator: its sustained warm-up ended (its Share-th completion) at At
	tBurst     = "burst"     // coordinator → worker: release dedicated burst Burst
	tBurstDone = "burst-done"
	tStop      = "stop"  // coordinator → worker: take no more measured work, finish and report
	tAbort     = "abort" // coordinator → worker: cancel what is in flight, report
	tDone      = "done"  // worker → coordinator: the cell ended (Outcome)
	tBye       = "bye"   // coordinator → worker: the run is over
)

// msg is every message; each type uses a few fields.
type msg struct {
	T    string `json:"t"`
	Name string `json:"name,omitempty"`
	Host string `json:"host,omitempty"`
	// Priority is the worker's scheduling priority (hello), as host.RaisePriority describes it.
	Priority string           `json:"priority,omitempty"`
	Nonce    string           `json:"nonce,omitempty"`
	MAC      string           `json:"mac,omitempty"`
	Err      string           `json:"err,omitempty"`
	Plan     *servebench.Plan `json:"plan,omitempty"`
	Marker   string           `json:"marker,omitempty"`
	// Origin is the worker's clock origin (its clock, Unix ns): its record offsets count from it.
	Origin int64 `json:"origin,omitempty"`
	// ID numbers a ping; T1..T3 are the exchange's times (Unix ns, each side's own clock).
	ID    int64              `json:"id,omitempty"`
	T1    int64              `json:"t1,omitempty"`
	T2    int64              `json:"t2,omitempty"`
	T3    int64              `json:"t3,omitempty"`
	Order *order             `json:"order,omitempty"`
	Seq   int64              `json:"seq,omitempty"`
	Warm  bool               `json:"warm,omitempty"`
	At    float64            `json:"at,omitempty"` // seconds from the worker's origin
	Rec   *servebench.Record `json:"rec,omitempty"`
	Burst int                `json:"burst,omitempty"`
	Start float64            `json:"start,omitempty"`
	End   float64            `json:"end,omitempty"`
	Out   *load.Outcome      `json:"out,omitempty"`
}

// order is one worker's part of a cell.
type order struct {
	// Key is the cell's key (full concurrency); every record carries it.
	Key servebench.CellKey `json:"key"`
	// Share is this worker's concurrency (sustained, dedicated, fixed); Requests its prompt
	// count (fixed) and Offsets its part of an open-loop schedule (from the cell's start).
	Share    int             `json:"share"`
	Requests int             `json:"requests,omitempty"`
	Offsets  []time.Duration `json:"offsets,omitempty"`
	// MaxDuration bounds an open-loop cell (load.Spec.MaxDuration).
	MaxDuration time.Duration `json:"max_duration,omitempty"`
	// The worker's j-th request of the cell has sequence number SeqBase + Slot + Stride × j:
	// run-wide unique, and in fixed and rate modes the same number a local run gives it. With
	// Items (a cell whose requests are grouped, load.Spec.Groups) it is SeqBase + Items[j]:
	// Items are the cell's requests (counted from its first) this worker sends, in order.
	SeqBase int64 `json:"seq_base"`
	Slot    int   `json:"slot"`
	Stride  int   `json:"stride"`
	Items   []int `json:"items,omitempty"`
	// StartAt is when to begin, on the worker's clock (Unix ns): every worker begins together.
	StartAt int64 `json:"start_at"`
}

// Message size limits (bytes of one JSON line). Before the peer has proven the token a line
// holds a hello or an auth of a few hundred bytes; after it, the largest is a record of a long
// answer (a gap per token) or a plan.
const (
	maxUnauthBytes  = 4 << 10
	maxMessageBytes = 16 << 20
)

// errTooLong ends a connection whose line is longer than its limit.
var errTooLong = errors.New("message too long")

// peer is one end of a connection: JSON lines in, JSON lines out (writes serialised). A line
// longer than max ends the connection without being held in memory.
type peer struct {
	conn net.Conn
	br   *bufio.Reader
	max  atomic.Int64
	wmu  sync.Mutex
	enc  *json.Encoder
}

func newPeer(c net.Conn, max int) *peer {
	p := &peer{conn: c, br: bufio.NewReaderSize(c, 16<<10), enc: json.NewEncoder(c)}
	p.max.Store(int64(max))
	return p
}

func (p *peer) send(m msg) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return p.enc.Encode(m)
}

func (p *peer) recv() (msg, error) {
	var m msg
	line, err := p.line()
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return m, fmt.Errorf("a message that is not servebench's protocol: %w", err)
	}
	return m, nil
}

// line reads one line, refusing one longer than the limit before it is read whole.
func (p *peer) line() ([]byte, error) {
	limit := int(p.max.Load())
	var buf []byte
	for {
		frag, err := p.br.ReadSlice('\n')
		if len(buf)+len(frag) > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", errTooLong, limit)
		}
		switch err {
		case nil:
			return append(buf, frag...), nil
		case bufio.ErrBufferFull:
			buf = append(buf, frag...)
		default:
			return nil, err
		}
	}
}

func nonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// validNonce: 32 lower-case hex digits, as nonce makes them.
func validNonce(s string) bool {
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// proof is HMAC-SHA256 under the token of "servebench-dist/1|" role "|" first "|" second: one
// side's proof that it knows the token, bound to both nonces of the connection (its own
// second), so it answers no other exchange. The worker proves first (role "worker", over the
// coordinator's nonce then its own); the coordinator answers only after checking it (role
// "coordinator", over the worker's nonce then its own).
func proof(token, role, first, second string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("servebench-dist/1|" + role + "|" + first + "|" + second))
	return hex.EncodeToString(m.Sum(nil))
}

func proofOK(token, role, first, second, got string) bool {
	return hmac.Equal([]byte(proof(token, role, first, second)), []byte(got))
}

// clock is a process's clock for the exchanges: its origin's wall time advanced by the
// monotonic time since, so a wall-clock step during the run does not move it.
type clock struct{ origin time.Time }

func (c clock) now() int64 { return c.origin.UnixNano() + time.Since(c.origin).Nanoseconds() }

// since is seconds from the origin (the offsets of records).
func (c clock) since() float64 { return time.Since(c.origin).Seconds() }
