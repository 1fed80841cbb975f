package e2e

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// A coordinator listening on 127.0.0.1 under attack, as a process: 3 strangers each send 200 MB
// of garbage without a newline (reconnecting whenever it hangs up), and a rogue worker that
// holds the token forges a record (TTFT 1 µs, a million output tokens). The coordinator's peak
// memory (VmHWM) stays under 100 MB, the rogue is dropped and its record kept in
// rejected.jsonl, the cell is measured again by the two honest worker processes, no record of
// the rogue counts, and the report says so. It judges memory and what the run records, not
// timings, so it runs in parallel with TestDistributedWorkerKilled (after the timing
// comparisons).
func TestDistributedUnderAttack(t *testing.T) {
	t.Parallel()
	base := startSim(t)
	common := []string{"--url", base + "/v1", "--contexts", "1k", "--concurrency", "3,6", "--output-tokens", "64", "--min-requests", "40",
		"--max-requests", "40", "--use-cases", "none", "--scenarios", "none", "--quiet", "--index", "none", "--gpu", "none"}
	port := freePort(t)
	addr := "127.0.0.1:" + port
	f := newFleet(t, port, portOf(t, base))
	f.start("w1", "tcp://"+addr)
	f.start("w2", "tcp://"+addr)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(cli(t), append([]string{"run", "--out", dir, "--workers", "3", "--min-workers", "2", "--listen", addr,
		"--join-timeout", "60s", "--format", "md"}, common...)...)
	cmd.Env = append(os.Environ(), "SERVEBENCH_TOKEN="+testToken)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var hwm atomic.Int64 // kB
	go func() {
		for {
			if kb := vmHWM(cmd.Process.Pid); kb > 0 {
				hwm.Store(kb)
			}
			select {
			case <-exited:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	const each = 200 << 20
	var sent [3]atomic.Int64
	var attackers sync.WaitGroup
	chunk := []byte(strings.Repeat("A", 1<<20))
	for i := range sent {
		attackers.Go(func() {
			deadline := time.Now().Add(2 * time.Minute)
			for sent[i].Load() < each && time.Now().Before(deadline) {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					time.Sleep(20 * time.Millisecond)
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
	rogueDone := make(chan string, 1)
	go func() { rogueDone <- rogueWorker(addr) }()

	err := cmd.Wait()
	close(exited)
	attackers.Wait()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code <= 0 {
		t.Fatal(err)
	}
	total := sent[0].Load() + sent[1].Load() + sent[2].Load()
	t.Logf("coordinator: exit %d, peak RSS %.1f MB; %d MB of garbage sent; rogue: %s", code, float64(hwm.Load())/1024, total>>20, <-rogueDone)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), f.logs())
	}
	if total < 3*each {
		t.Errorf("only %d MB of garbage went out", total>>20)
	}
	if kb := hwm.Load(); kb <= 0 || kb > 100*1024 {
		t.Errorf("the coordinator's peak memory was %d kB (want under 100 MB)", kb)
	}
	res := readResults(t, dir)
	if len(res.Outages) != 1 || res.Outages[0].Worker != "rogue" || !strings.Contains(res.Outages[0].Cause, "contradict its order") {
		t.Fatalf("outages %+v: want the rogue dropped\n%s", res.Outages, out.String())
	}
	attempt := map[int]int{}
	for _, c := range res.Cells {
		attempt[c.Concurrency] = c.Attempt
		if c.SuccessRate != 1 || c.SystemOutputThroughputTPS > 1e5 || c.OutputTokensMean != 64 {
			t.Errorf("cell %s: success %.3f, %.0f tok/s, %.1f output tokens", c.ID(), c.SuccessRate, c.SystemOutputThroughputTPS, c.OutputTokensMean)
		}
	}
	for _, rec := range readRecords(t, filepath.Join(dir, "requests.jsonl")) {
		if rec.OutputTokens > 128 || (rec.Worker == "rogue" && rec.CellAttempt == attempt[rec.Concurrency]) {
			t.Errorf("a record of the rogue is kept: %+v", rec)
		}
	}
	rej := string(mustRead(t, filepath.Join(dir, "rejected.jsonl")))
	if !strings.Contains(rej, `"worker":"rogue"`) || !strings.Contains(rej, `"output_tokens":1000000`) {
		t.Errorf("rejected.jsonl:\n%s", rej)
	}
	md := string(mustRead(t, filepath.Join(dir, "report.md")))
	if !strings.Contains(md, "Worker lost: worker rogue") {
		t.Errorf("report.md does not state the rogue's drop")
	}
	if strings.Contains(out.String()+f.logs(), testToken) {
		t.Error("the token was printed")
	}
}

// vmHWM is a process's peak resident memory (kB), 0 when it cannot be read.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// rogueWorker joins the coordinator at addr with the token, as a worker does (the handshake
// of docs/distributed.md), answers its clock exchanges, and sends a forged record in its first
// cell. It returns what happened to it.
func rogueWorker(addr string) string {
	var conn net.Conn
	for deadline := time.Now().Add(time.Minute); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			return "could not connect: " + err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	enc := json.NewEncoder(conn)
	recv := func() (map[string]any, error) {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(line, &m)
	}
	nb := make([]byte, 16)
	_, _ = rand.Read(nb)
	mine := hex.EncodeToString(nb)
	_ = enc.Encode(map[string]any{"t": "hello", "name": "rogue", "nonce": mine})
	ch, err := recv()
	if err != nil {
		return "no challenge: " + err.Error()
	}
	mac := hmac.New(sha256.New, []byte(testToken))
	mac.Write([]byte("servebench-dist/1|worker|" + fmt.Sprint(ch["nonce"]) + "|" + mine))
	_ = enc.Encode(map[string]any{"t": "auth", "mac": hex.EncodeToString(mac.Sum(nil))})
	if m, err := recv(); err != nil || m["t"] != "welcome" {
		return fmt.Sprintf("not welcome: %v %v", m["t"], err)
	}
	origin := time.Now()
	_ = enc.Encode(map[string]any{"t": "ready", "origin": origin.UnixNano()})
	for {
		m, err := recv()
		if err != nil {
			return "connection ended: " + err.Error()
		}
		switch m["t"] {
		case "ping":
			now := time.Now().UnixNano()
			_ = enc.Encode(map[string]any{"t": "pong", "id": m["id"], "t1": m["t1"], "t2": now, "t3": now})
		case "cell":
			b, _ := json.Marshal(m["order"])
			var o struct {
				Key     servebench.CellKey `json:"key"`
				SeqBase int64              `json:"seq_base"`
				Slot    int64              `json:"slot"`
			}
			_ = json.Unmarshal(b, &o)
			at := time.Since(origin).Seconds()
			rec := servebench.Record{CellKey: o.Key, Seq: o.SeqBase + o.Slot, Worker: "rogue", Warmup: true, StartOffsetSeconds: at, EndOffsetSeconds: at + 0.01,
				TTFTSeconds: 1e-6, E2ELatencySeconds: 0.01, DecodeSeconds: 0.009, OutputTokens: 1_000_000, OutputTokensRequested: o.Key.OutputTokens,
				InputTokens: o.Key.ContextTokens, InputTokensRequested: o.Key.ContextTokens, Chunks: 1000, OutputTokensSource: servebench.SourceUsage}
			servebench.Derive(&rec, servebench.Timing{FirstToken: time.Microsecond, LastToken: 9 * time.Millisecond, End: 10 * time.Millisecond})
			_ = enc.Encode(map[string]any{"t": "started", "seq": rec.Seq, "warm": true, "at": at})
			_ = enc.Encode(map[string]any{"t": "record", "rec": rec})
		}
	}
}
