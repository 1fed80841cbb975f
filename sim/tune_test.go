package sim

import (
	"flag"
	"fmt"
	"testing"
)

var tableProfile = flag.String("sim.table", "", "print the Simulate table of this profile (e.g. fast) and exit the test")

// TestProfileTable prints a profile's context × concurrency table on virtual time, for tuning:
//
//	go test ./sim -run TestProfileTable -v -args -sim.table=fast
func TestProfileTable(t *testing.T) {
	if *tableProfile == "" {
		t.Skip("set -sim.table=PROFILE to print the table")
	}
	p, err := LookupProfile(*tableProfile)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s: KV capacity %d tokens, max model len %d\n", p.Name, p.KVCapacityTokens(), p.Engine.MaxModelLen)
	for _, ctx := range []int{1024, 4096, 8192, 16384, 32768, 48000} {
		for _, n := range []int{1, 2, 4, 8, 16} {
			if ctx+1024 > min(p.Engine.MaxModelLen, p.KVCapacityTokens()) {
				continue
			}
			e, err := Simulate(p, Workload{ContextTokens: ctx, OutputTokens: 1024, Concurrency: n, Requests: 2 * n})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("ctx=%6d n=%2d ttft=%7.3f queue=%7.3f prefill=%7.3f prefill_tps=%6.0f gen_tps=%6.1f sys_tps=%7.1f W=%4.0f preempt=%d\n",
				ctx, n, e.TTFTSeconds, e.QueueSeconds, e.PrefillSeconds, e.PrefillSpeedTPS, e.GenerationSpeedTPS, e.SystemOutputTPS, e.MeanPowerWatts, e.Preemptions)
		}
	}
}
