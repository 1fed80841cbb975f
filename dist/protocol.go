package dist

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"sync"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
)

// Message types.
const (
	tHello     = "hello"     // worker → coordinator: name, host, nonce
	tChallenge = "challenge" // coordinator → worker: its nonce, its proof of the token
	tAuth      = "auth"      // worker → coordinator: its proof of the token
	tWelcome   = "welcome"   // coordinator → worker: plan and prompt marker
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
	// run-wide unique, and in fixed and rate modes the same number a local run gives it.
	SeqBase int64 `json:"seq_base"`
	Slot    int   `json:"slot"`
	Stride  int   `json:"stride"`
	// StartAt is when to begin, on the worker's clock (Unix ns): every worker begins together.
	StartAt int64 `json:"start_at"`
}

// peer is one end of a connection: JSON lines in, JSON lines out (writes serialised).
type peer struct {
	conn net.Conn
	dec  *json.Decoder
	wmu  sync.Mutex
	enc  *json.Encoder
}

func newPeer(c net.Conn) *peer {
	return &peer{conn: c, dec: json.NewDecoder(bufio.NewReaderSize(c, 64<<10)), enc: json.NewEncoder(c)}
}

func (p *peer) send(m msg) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return p.enc.Encode(m)
}

func (p *peer) recv() (msg, error) {
	var m msg
	err := p.dec.Decode(&m)
	return m, err
}

func nonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// proof is the HMAC-SHA256 of role|nonce under the token: it shows the token is known without
// sending it.
func proof(token, role, nonce string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(role + "|" + nonce))
	return hex.EncodeToString(m.Sum(nil))
}

func proofOK(token, role, nonce, got string) bool {
	return hmac.Equal([]byte(proof(token, role, nonce)), []byte(got))
}

// clock is a process's clock for the exchanges: its origin's wall time advanced by the
// monotonic time since, so a wall-clock step during the run does not move it.
type clock struct{ origin time.Time }

func (c clock) now() int64 { return c.origin.UnixNano() + time.Since(c.origin).Nanoseconds() }

// since is seconds from the origin (the offsets of records).
func (c clock) since() float64 { return time.Since(c.origin).Seconds() }
