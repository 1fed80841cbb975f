package gpu

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// smiLine is one GPU's line of smiQuery's CSV.
func smiLine(idx int, watts float64) string {
	return fmt.Sprintf("%d, NVIDIA H100 80GB HBM3, GPU-%d, %.2f, 100, 1000, 81559, 40\n", idx, idx, watts)
}

// TestSMILoop: after the first read (nvidia-smi once), reads return the looping nvidia-smi's
// latest complete sample without running it again; a sample is never stitched from two periods;
// a loop that stops printing is left after smiStale; Close stops it.
func TestSMILoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs, stops atomic.Int32
		pr, pw := io.Pipe()
		s := &NvidiaSMI{
			run: func(context.Context) ([]byte, error) {
				runs.Add(1)
				return []byte(smiLine(0, 100) + smiLine(1, 101)), nil
			},
			loop: func() (io.ReadCloser, func(), error) {
				return pr, func() { stops.Add(1); pw.Close() }, nil
			},
		}
		ctx := context.Background()
		read := func() Reading {
			t.Helper()
			r, err := s.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if r := read(); r.GPUs[0].PowerWatts != 100 || runs.Load() != 1 {
			t.Fatalf("first read: %+v after %d runs", r.GPUs, runs.Load())
		}
		io.WriteString(pw, smiLine(0, 200)+smiLine(1, 201))
		synctest.Wait()
		if r := read(); r.GPUs[0].PowerWatts != 200 || r.GPUs[1].PowerWatts != 201 || runs.Load() != 1 {
			t.Fatalf("loop sample: %+v after %d runs (want 200, 201 from the loop, nvidia-smi run once)", r.GPUs, runs.Load())
		}
		// a period cut short (GPU 0 only), then a whole one: the half is dropped
		time.Sleep(smiLoop)
		io.WriteString(pw, smiLine(0, 300)+"garbage\n"+smiLine(0, 400)+smiLine(0, 500)+smiLine(1, 501))
		synctest.Wait()
		if r := read(); r.GPUs[0].PowerWatts != 500 || r.GPUs[1].PowerWatts != 501 {
			t.Fatalf("after a broken period: %+v, want 500 and 501", r.GPUs)
		}
		time.Sleep(smiStale)
		if r := read(); r.GPUs[0].PowerWatts != 100 || runs.Load() != 2 {
			t.Fatalf("stale loop: %+v after %d runs, want nvidia-smi run again", r.GPUs, runs.Load())
		}
		s.Close()
		if stops.Load() != 1 {
			t.Fatalf("Close stopped the loop %d times", stops.Load())
		}
	})
}

// TestMeterKeepsEachSampleOnce: a source that gives its latest sample again adds no reading.
func TestMeterKeepsEachSampleOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := time.Now()
		src := sourceFunc(func() Reading {
			if time.Since(at) >= time.Second {
				at = at.Add(time.Second)
			}
			return Reading{Time: at, GPUs: []GPUReading{{PowerWatts: 1}}}
		})
		m := NewMeter(src, 250*time.Millisecond)
		m.Start(context.Background())
		time.Sleep(2100 * time.Millisecond)
		if got := m.Stop(); len(got) != 3 {
			t.Fatalf("%d readings of 3 samples", len(got))
		}
	})
}

type sourceFunc func() Reading

func (f sourceFunc) Name() string                          { return "func" }
func (f sourceFunc) Read(context.Context) (Reading, error) { return f(), nil }

// TestCheckRefusesImpossibleReadings: each impossible figure is refused with its GPU and field
// named; a plausible reading and an unread field ("[N/A]", 0) pass.
func TestCheckRefusesImpossibleReadings(t *testing.T) {
	neg := -1.0
	nan := math.NaN()
	ok := GPUReading{Index: 1, PowerWatts: 320, UtilPercent: 100, MemUsedBytes: 70e9, MemTotalBytes: 80e9, TempC: 47}
	for _, tc := range []struct {
		name  string
		edit  func(*GPUReading)
		field string // "" when the reading passes
	}{
		{"plausible", func(*GPUReading) {}, ""},
		{"unread power", func(g *GPUReading) { g.PowerWatts = 0 }, ""},
		{"cold room", func(g *GPUReading) { g.TempC = -5 }, ""},
		{"NaN power", func(g *GPUReading) { g.PowerWatts = math.NaN() }, "power"},
		{"infinite power", func(g *GPUReading) { g.PowerWatts = math.Inf(1) }, "power"},
		{"negative power", func(g *GPUReading) { g.PowerWatts = -3 }, "power"},
		{"a megawatt", func(g *GPUReading) { g.PowerWatts = 1e6 }, "power"},
		{"utilisation 150%", func(g *GPUReading) { g.UtilPercent = 150 }, "utilisation"},
		{"memory above total", func(g *GPUReading) { g.MemUsedBytes = 90e9 }, "above its total"},
		{"boiling", func(g *GPUReading) { g.TempC = 900 }, "temperature"},
		{"NaN energy", func(g *GPUReading) { g.EnergyJoules = &nan }, "energy"},
		{"negative energy", func(g *GPUReading) { g.EnergyJoules = &neg }, "energy"},
	} {
		g := ok
		tc.edit(&g)
		err := Check(Reading{GPUs: []GPUReading{ok, g}})
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.field != "" && (err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "GPU 1")):
			t.Errorf("%s: %v, want a refusal naming GPU 1 and %q", tc.name, err, tc.field)
		}
	}
}

// TestMeterRefusesImpossibleReadings: a reading of NaN watts (nvidia-smi's CSV parses "NaN") is
// not kept, and the meter counts it with its reason.
func TestMeterRefusesImpossibleReadings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		i := 0
		src := sourceFunc(func() Reading {
			i++
			w := 300.0
			if i%2 == 0 {
				r, err := ParseSMI("0, H100, GPU-1, NaN, 88, 70000, 81920, 64\n")
				if err != nil {
					t.Fatal(err)
				}
				return Reading{Time: time.Now(), GPUs: r.GPUs}
			}
			return Reading{Time: time.Now(), GPUs: []GPUReading{{PowerWatts: w}}}
		})
		m := NewMeter(src, 250*time.Millisecond)
		m.Start(context.Background())
		time.Sleep(900 * time.Millisecond)
		got := m.Stop()
		n, err := m.Refused()
		if len(got) != 3 || n != 2 || err == nil || !strings.Contains(err.Error(), "power") {
			t.Fatalf("%d kept, %d refused (%v); want 3 kept and 2 refused for their power", len(got), n, err)
		}
		for _, r := range got {
			if r.GPUs[0].PowerWatts != 300 {
				t.Fatalf("kept %+v", r.GPUs[0])
			}
		}
	})
}
