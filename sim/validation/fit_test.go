package validation

import (
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/servebench/servebench/sim"
)

var (
	fitFlag  = flag.Bool("fit", false, "fit the engine-overhead parameters of the reference profiles on the points marked fit and print them")
	fitGroup = flag.Int("fit.group", -1, "fit only this group (0-based)")
)

// param is one fitted engine parameter: get and set on a profile (seconds for durations).
type param struct {
	name     string
	lo, hi   float64
	get      func(p *sim.Profile) float64
	set      func(p *sim.Profile, v float64)
	onlyEach func(p *sim.Profile) bool // nil: every profile of the group
}

func dur(f func(e *sim.EngineSpec) *time.Duration) (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
	return func(p *sim.Profile) float64 { return f(&p.Engine).Seconds() },
		func(p *sim.Profile, v float64) { *f(&p.Engine) = time.Duration(v * float64(time.Second)) }
}

func num(f func(e *sim.EngineSpec) *float64) (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
	return func(p *sim.Profile) float64 { return *f(&p.Engine) }, func(p *sim.Profile, v float64) { *f(&p.Engine) = v }
}

func mk(name string, lo, hi float64, gs func() (func(*sim.Profile) float64, func(*sim.Profile, float64))) param {
	g, s := gs()
	return param{name: name, lo: lo, hi: hi, get: g, set: s}
}

var (
	pCompute = mk("ComputeEfficiency", 0.005, 1, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
		return num(func(e *sim.EngineSpec) *float64 { return &e.ComputeEfficiency })
	})
	pAttn = mk("AttentionEfficiency", 0.02, 1, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
		return num(func(e *sim.EngineSpec) *float64 { return &e.AttentionEfficiency })
	})
	pBW = mk("BandwidthEfficiency", 0.2, 1, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
		return num(func(e *sim.EngineSpec) *float64 { return &e.BandwidthEfficiency })
	})
	pKVBW = mk("KVBandwidthEfficiency", 0.05, 1, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
		return num(func(e *sim.EngineSpec) *float64 { return &e.KVBandwidthEfficiency })
	})
	pSpread = param{name: "ExpertSpread", lo: 0.05, hi: 1,
		get: func(p *sim.Profile) float64 { return p.Model.ExpertSpread },
		set: func(p *sim.Profile, v float64) { p.Model.ExpertSpread = v }}
	pAccept = mk("SpecAcceptance", 0.2, 0.95, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
		return num(func(e *sim.EngineSpec) *float64 { return &e.SpecAcceptance })
	})
	pStep = param{name: "StepOverhead (= DraftOverhead)", lo: 1e-5, hi: 0.05,
		get: func(p *sim.Profile) float64 { return p.Engine.StepOverhead.Seconds() },
		set: func(p *sim.Profile, v float64) {
			p.Engine.StepOverhead = time.Duration(v * 1e9)
			if p.Engine.SpecTokens > 0 {
				p.Engine.DraftOverhead = p.Engine.StepOverhead
			}
		}}
	pSeq = mk("PerSeqOverhead", 1e-6, 0.005, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
		return dur(func(e *sim.EngineSpec) *time.Duration { return &e.PerSeqOverhead })
	})
	pReq = mk("RequestOverhead", 1e-4, 0.5, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
		return dur(func(e *sim.EngineSpec) *time.Duration { return &e.RequestOverhead })
	})
	pLayer = func() param {
		p := mk("LayerOverhead (eager)", 1e-6, 0.005, func() (func(*sim.Profile) float64, func(*sim.Profile, float64)) {
			return dur(func(e *sim.EngineSpec) *time.Duration { return &e.LayerOverhead })
		})
		p.onlyEach = func(p *sim.Profile) bool { return p.GPU.Count == 8 }
		return p
	}()
)

// TestFit fits each group's parameters by coordinate search on log-parameters, minimising the
// sum of squared log errors over the group's fit points, and prints them. Run it once after a
// change to the model or the specs, and copy the values into sim/reference.go:
//
//	go test ./sim/validation -run TestFit -v -args -fit
func TestFit(t *testing.T) {
	if !*fitFlag {
		t.Skip("set -fit to fit the engine-overhead parameters")
	}
	groups := []struct {
		configs []string
		params  []param
		// fitOn are the configurations whose fit points the group is fitted on (nil: all of
		// configs); the others only receive the group's values
		fitOn []string
	}{
		{[]string{"glm47-flash-bf16-1xh200"}, []param{pCompute, pAttn, pBW, pKVBW, pStep, pSeq, pReq, pSpread}, nil},
		{[]string{"qwen36-35b-a3b-fp8-mtp-1xrtxpro6000"}, []param{pCompute, pAttn, pBW, pKVBW, pStep, pSeq, pReq, pAccept, pSpread}, nil},
		{[]string{"step37-flash-nvfp4-2xrtxpro6000"}, []param{pCompute, pAttn, pBW, pKVBW, pStep, pSeq, pReq}, nil},
		// the post's shared values, fitted on the B200 and H100 points and given to the A100 too
		{[]string{"step37-flash-bf16-mtp-4xb200", "step37-flash-bf16-mtp-8xh100", "step37-flash-bf16-mtp-8xa100"},
			[]param{pCompute, pStep, pAccept, pLayer}, []string{"step37-flash-bf16-mtp-4xb200", "step37-flash-bf16-mtp-8xh100"}},
		// then the A100's own compute efficiency (the group above's other values kept), on its
		// one fit point, the TPOT; its TTFT, ITL, per-user speed and throughput stay held out
		{[]string{"step37-flash-bf16-mtp-8xa100"}, []param{pCompute}, nil},
	}
	all, err := Points()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	for gi, g := range groups {
		if *fitGroup >= 0 && gi != *fitGroup {
			continue
		}
		in := map[string]bool{}
		fitOn := g.fitOn
		if fitOn == nil {
			fitOn = g.configs
		}
		for _, c := range fitOn {
			in[c] = true
		}
		var pts []Point
		for _, p := range all {
			if in[p.Config] && p.Fit {
				pts = append(pts, p)
			}
		}
		loss := func() float64 {
			r.Reset()
			var s float64
			for _, p := range pts {
				row, err := r.Row(p)
				if err != nil || row.Simulated <= 0 {
					return math.Inf(1)
				}
				d := math.Log(row.Simulated / p.Value)
				s += d * d
			}
			return s
		}
		get := func(pr param) float64 {
			for _, c := range g.configs {
				p := r.Profiles[c]
				if pr.onlyEach == nil || pr.onlyEach(&p) {
					return pr.get(&p)
				}
			}
			return 0
		}
		set := func(pr param, v float64) {
			for _, c := range g.configs {
				p := r.Profiles[c]
				if pr.onlyEach == nil || pr.onlyEach(&p) {
					pr.set(&p, v)
					r.Profiles[c] = p
				}
			}
		}
		best := loss()
		for step := 0.5; step > 0.01; step /= 2 {
			for improved := true; improved; {
				improved = false
				for _, pr := range g.params {
					v := get(pr)
					for _, f := range []float64{math.Exp(step), math.Exp(-step)} {
						nv := math.Min(pr.hi, math.Max(pr.lo, v*f))
						if nv == v {
							continue
						}
						set(pr, nv)
						if l := loss(); l < best-1e-9 {
							best, v, improved = l, nv, true
						} else {
							set(pr, v)
						}
					}
				}
			}
		}
		fmt.Printf("group %v: rms log error %.3f over %d points\n", g.configs, math.Sqrt(best/float64(len(pts))), len(pts))
		for _, pr := range g.params {
			fmt.Printf("    %s: %.4g\n", pr.name, get(pr))
		}
		r.Reset()
		for _, p := range pts {
			row, _ := r.Row(p)
			fmt.Printf("    %-11s %7d×%-3d published %.4g simulated %.4g (%+.0f%%)\n", p.Metric, p.Context, p.Concurrency, p.Value, row.Simulated, 100*row.Err)
		}
	}
}
