package gpu

import (
	"context"
	"fmt"
	"io"
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
