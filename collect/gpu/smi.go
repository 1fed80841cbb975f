package gpu

import (
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// smiQuery is what nvidia-smi is asked for, in this order.
const smiQuery = "index,name,uuid,power.draw,utilization.gpu,memory.used,memory.total,temperature.gpu"

// NvidiaSMI samples `nvidia-smi --query-gpu=… --format=csv,noheader,nounits`. It has no energy
// counter, so energy is integrated from sampled power.
type NvidiaSMI struct {
	run func(ctx context.Context) ([]byte, error)
}

// NewNvidiaSMI runs the real nvidia-smi when run is nil (tests inject the output).
func NewNvidiaSMI(run func(ctx context.Context) ([]byte, error)) *NvidiaSMI {
	if run == nil {
		run = func(ctx context.Context) ([]byte, error) {
			return exec.CommandContext(ctx, "nvidia-smi", "--query-gpu="+smiQuery, "--format=csv,noheader,nounits").Output()
		}
	}
	return &NvidiaSMI{run: run}
}

// Name is "nvidia-smi".
func (s *NvidiaSMI) Name() string { return "nvidia-smi" }

// Read runs nvidia-smi once.
func (s *NvidiaSMI) Read(ctx context.Context) (Reading, error) {
	out, err := s.run(ctx)
	if err != nil {
		return Reading{}, fmt.Errorf("nvidia-smi: %w", err)
	}
	r, err := ParseSMI(string(out))
	r.Time = time.Now()
	return r, err
}

// ParseSMI reads the CSV of smiQuery; "[N/A]" fields read as 0.
func ParseSMI(out string) (Reading, error) {
	rd := csv.NewReader(strings.NewReader(out))
	rd.TrimLeadingSpace = true
	rows, err := rd.ReadAll()
	if err != nil {
		return Reading{}, fmt.Errorf("nvidia-smi output: %w", err)
	}
	var r Reading
	for _, row := range rows {
		if len(row) != 8 {
			return Reading{}, fmt.Errorf("nvidia-smi output: %d fields, want 8: %q", len(row), row)
		}
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return 0
			}
			return v
		}
		idx, _ := strconv.Atoi(strings.TrimSpace(row[0]))
		r.GPUs = append(r.GPUs, GPUReading{Index: idx, Name: row[1], UUID: row[2], PowerWatts: num(row[3]), UtilPercent: num(row[4]),
			MemUsedBytes: num(row[5]) * (1 << 20), MemTotalBytes: num(row[6]) * (1 << 20), TempC: num(row[7])})
	}
	if len(r.GPUs) == 0 {
		return r, fmt.Errorf("nvidia-smi listed no GPU")
	}
	return r, nil
}
