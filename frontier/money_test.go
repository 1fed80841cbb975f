package frontier

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// TestHandComputed checks the money and power formulas against figures worked out by hand, to
// the cent and to the token.
func TestHandComputed(t *testing.T) {
	cases := []struct {
		name                string
		tpsPerGPU, usd, kW  float64
		cents               float64 // $/1M output tokens, in cents
		tokensPerUSD, perMW float64 // rounded to the token
		joulesPerToken      float64 // rounded to the millijoule
	}{
		// 1,000 tok/s/GPU at $2.00 and 1.37 kW: 1,000 × 3,600 = 3.6M tokens per GPU-hour, so
		// $2.00 / 3.6 = $0.5556 per 1M → 56 ¢; 3.6M / $2 = 1,800,000 tokens per $; 1,000 ×
		// 1,000 / 1.37 = 729,927.0 tok/s per MW; 1,370 W / 1,000 tok/s = 1.370 J/token.
		{"round figures", 1000, 2.00, 1.37, 56, 1_800_000, 729_927, 1.370},
		// The published 4× B200 figure, 1,597 tok/s per replica = 399.25 tok/s/GPU, at the
		// B200 rental default $3.70 and 1.71 kW: 399.25 × 3,600 = 1,437,300 tokens per GPU-hour;
		// $3.70 / 1.4373 = $2.5743 → 257 ¢; 1,437,300 / 3.70 = 388,459.46 → 388,459 tokens per $;
		// 399.25 × 1,000 / 1.71 = 233,479.53 → 233,480 tok/s per MW; 1,710 / 399.25 = 4.283 J.
		{"4x B200 rental", 399.25, 3.70, 1.71, 257, 388_459, 233_480, 4.283},
		// The published 8× H100 figure, 1,245 tok/s = 155.625 tok/s/GPU at the H100 owning
		// default $1.17: 155.625 × 3,600 = 560,250 tokens per GPU-hour; $1.17 / 0.56025 =
		// $2.0884 → 209 ¢; 560,250 / 1.17 = 478,846.15 → 478,846 tokens per $; 155,625 / 1.37 =
		// 113,594.89 → 113,595 tok/s per MW; 1,370 / 155.625 = 8.803 J.
		{"8x H100 owning", 155.625, 1.17, 1.37, 209, 478_846, 113_595, 8.803},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := math.Round(USDPerMillionTokens(c.tpsPerGPU, c.usd) * 100); got != c.cents {
				t.Errorf("$/1M = %v ¢, want %v ¢", got, c.cents)
			}
			if got := math.Round(TokensPerUSD(c.tpsPerGPU, c.usd)); got != c.tokensPerUSD {
				t.Errorf("tokens per $ = %v, want %v", got, c.tokensPerUSD)
			}
			if got := math.Round(TokensPerSecondPerMW(c.tpsPerGPU, c.kW)); got != c.perMW {
				t.Errorf("tok/s per MW = %v, want %v", got, c.perMW)
			}
			if got := math.Round(AllInJoulesPerToken(c.tpsPerGPU, c.kW)*1000) / 1000; got != c.joulesPerToken {
				t.Errorf("J/token = %v, want %v", got, c.joulesPerToken)
			}
		})
	}
	// Without a positive input there is no figure (never a division by zero or a negative cost).
	for _, f := range []func(float64, float64) float64{USDPerMillionTokens, TokensPerUSD, TokensPerSecondPerMW, AllInJoulesPerToken} {
		if f(0, 2) != 0 || f(100, 0) != 0 || f(-1, 2) != 0 {
			t.Error("a formula gave a figure from a zero or negative input")
		}
	}
}

func TestFleet(t *testing.T) {
	// 2,000 users, a replica holding 32 at the speed asked: ⌈2,000 / 32⌉ = ⌈62.5⌉ = 63
	// replicas; of 4 GPUs at $3.70: 252 GPUs, 252 × 3.70 × 730 = $680,652 a month.
	if got := ReplicasFor(2000, 32); got != 63 {
		t.Errorf("replicas = %d, want 63", got)
	}
	if got := MonthlyUSD(63*4, 3.70); math.Abs(got-680_652) > 0.005 {
		t.Errorf("monthly = %v, want 680652", got)
	}
	// exactly full: 1,000 users on replicas of 250 is 4, not 5; an interpolated 12.5 per replica
	// takes 80 for 1,000
	if got := ReplicasFor(1000, 250); got != 4 {
		t.Errorf("replicas = %d, want 4", got)
	}
	if got := ReplicasFor(1000, 12.5); got != 80 {
		t.Errorf("replicas = %d, want 80", got)
	}
	if got := ReplicasFor(0, 32); got != 0 {
		t.Errorf("replicas for nobody = %d, want 0", got)
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		name     string
		plan     servebench.SizingPlan
		gpu      string
		gpus     int
		gpuSrc   Source
		prices   []float64
		priceSrc Source
		kW       float64
	}{
		// the count written in metadata.gpu and a known kind: declared count, table prices
		{"known kind", servebench.SizingPlan{}, "4x B200", 4, Declared, []float64{3.70, 1.73}, Defaulted, 1.71},
		// GB200 must not be read as B200
		{"GB200 before B200", servebench.SizingPlan{}, "72x GB200 NVL72", 72, Declared, []float64{4.00, 1.86}, Defaulted, 1.87},
		// a long name with the kind inside it
		{"long name", servebench.SizingPlan{}, "8× NVIDIA H100 80GB HBM3", 8, Declared, []float64{2.00, 1.17}, Defaulted, 1.37},
		// a declared price replaces the table's, the kW stays the table's
		{"declared price", servebench.SizingPlan{GPUUSDPerHour: 2.5, GPUsPerReplica: 2}, "8x H200", 2, Declared, []float64{2.5}, Declared, 1.37},
		// a kind the table lacks: no price, no kW; no count: assumed 1
		{"unknown kind", servebench.SizingPlan{}, "A100 80GB", 1, Defaulted, nil, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := Resolve(c.plan, c.gpu)
			if h.GPUs != c.gpus || h.GPUsSource != c.gpuSrc {
				t.Errorf("GPUs = %d (%s), want %d (%s)", h.GPUs, h.GPUsSource, c.gpus, c.gpuSrc)
			}
			if len(h.Prices) != len(c.prices) {
				t.Fatalf("prices = %+v, want %v", h.Prices, c.prices)
			}
			for i, p := range h.Prices {
				if p.USDPerGPUHour != c.prices[i] || p.Source != c.priceSrc {
					t.Errorf("price %d = %v (%s), want %v (%s)", i, p.USDPerGPUHour, p.Source, c.prices[i], c.priceSrc)
				}
			}
			if h.AllInKWPerGPU != c.kW {
				t.Errorf("kW = %v, want %v", h.AllInKWPerGPU, c.kW)
			}
			in := h.Inputs()
			if !strings.Contains(in, string(c.gpuSrc)) {
				t.Errorf("Inputs() = %q does not say the GPU count is %s", in, c.gpuSrc)
			}
			if h.Known != nil && !strings.Contains(in, DefaultsSource) {
				t.Errorf("Inputs() = %q does not cite the defaults table", in)
			}
		})
	}
}
