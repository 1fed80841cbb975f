package promscrape

import (
	"strings"
	"testing"
)

func snap(t *testing.T, text string) *Snapshot {
	t.Helper()
	fams, err := Parse(strings.NewReader(text), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	return &Snapshot{Engine: Detect(fams), fams: fams}
}

const vllmTmpl = `# TYPE process_start_time_seconds gauge
process_start_time_seconds START
# TYPE vllm:request_success_total counter
vllm:request_success_total{finished_reason="length"} DONE
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{le="+Inf"} DONE
vllm:request_queue_time_seconds_sum SUM
vllm:request_queue_time_seconds_count DONE
`

func vllm(start, done, sum string) string {
	return strings.NewReplacer("START", start, "DONE", done, "SUM", sum).Replace(vllmTmpl)
}

func TestRestarted(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		want          string // substring of the reason; "" = no restart
	}{
		// counters grew: an ordinary cell
		{"normal", vllm("1000", "10", "1.5"), vllm("1000", "30", "4.5"), ""},
		// restart early in the first cell: counters from 0 grew back past their old value, only
		// the start time tells
		{"first cell", vllm("1000", "0", "0"), vllm("2000", "12", "2"), "process_start_time_seconds changed"},
		// no start time exposed, a counter went down
		{"counter reset", strings.Replace(vllm("1", "50", "9"), "process_start_time_seconds 1\n", "", 1),
			strings.Replace(vllm("1", "7", "1"), "process_start_time_seconds 1\n", "", 1), "went down"},
	}
	for _, tt := range tests {
		got := Restarted(snap(t, tt.before), snap(t, tt.after))
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Restarted = %q, want %q", tt.name, got, tt.want)
		}
	}
}
