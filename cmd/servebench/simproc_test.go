package main

import (
	"bufio"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/sim"
)

// The built-in simulator of a run without --url serves from a process of its own: while a
// response streams from it, no goroutine of this process runs the simulator's code (in this
// process its goroutines would count in the client's scheduler latency, which decides whether
// a cell is client-bound), and after stop nothing serves on its address.
func TestSimProcessServesAndStops(t *testing.T) {
	t.Setenv("SERVEBENCH_TEST_AS_CLI", "1") // the executable it starts is this test binary, as the command (TestMain)
	prof, err := sim.LookupProfile(plan.DemoProfile)
	if err != nil {
		t.Fatal(err)
	}
	base, stop, err := startSimProcess(prof, 1)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	body := `{"model":"` + prof.Model.Name + `","messages":[{"role":"user","content":"hello"}],"max_tokens":64,"stream":true}`
	resp, err := hc.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Errorf("first line of the stream %q (%v), want an event", line, err)
	}
	// mid-stream: the simulator is generating the rest of this response
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "servebench/sim.") {
		t.Errorf("a goroutine of this process runs the simulator:\n%s", stacks)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stop()
	if resp, err := hc.Get(base + "/v1/models"); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers after stop (%s)", base, resp.Status)
	}
}
