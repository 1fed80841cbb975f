package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDatasetJSONL(t *testing.T) {
	p := writeFile(t, "d.jsonl", `{"messages": [{"role": "system", "content": "terse"}, {"role": "user", "content": "one"}], "output_tokens": 8, "source": "x"}

{"prompt": "two", "output_tokens": 16}
{"prompt": "three"}
`)
	d, err := LoadDataset(p, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != "jsonl" || len(d.Entries) != 3 {
		t.Fatalf("format %q, %d entries", d.Format, len(d.Entries))
	}
	e := d.Entries[0]
	if len(e.Messages) != 2 || e.Messages[1].Content != "one" || e.OutputTokens != 8 || e.Index != 0 {
		t.Errorf("entry 0 = %+v", e)
	}
	if e := d.Entries[1]; e.Messages[0] != (servebench.Message{Role: "user", Content: "two"}) || e.OutputTokens != 16 || e.Index != 1 {
		t.Errorf("entry 1 = %+v (the blank line is not an entry)", e)
	}
	// Fill: the entry's output length, else the default; the index travels with the request.
	var req servebench.Request
	d.Entries[2].Fill(&req, 99)
	if req.MaxOutputTokens != 99 || *req.DatasetIndex != 2 || req.Messages[0].Content != "three" {
		t.Errorf("filled %+v", req)
	}
	// Replay cycles in order.
	r := NewReplay(d)
	var got []int
	for range 7 {
		got = append(got, r.Next().Index)
	}
	if want := []int{0, 1, 2, 0, 1, 2, 0}; !equal(got, want) {
		t.Errorf("replay order %v, want %v", got, want)
	}
}

func TestLoadDatasetShareGPT(t *testing.T) {
	p := writeFile(t, "sg.json", `[
 {"id": "a", "conversations": [{"from": "system", "value": "sys"}, {"from": "human", "value": "q1"}, {"from": "gpt", "value": "a1"}, {"from": "human", "value": "q2"}]},
 {"id": "b", "conversations": [{"from": "gpt", "value": "only an answer"}]},
 {"id": "c", "conversations": [{"from": "human", "value": "q"}]}
]`)
	d, err := LoadDataset(p, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != "sharegpt" || len(d.Entries) != 2 {
		t.Fatalf("format %q, %d entries (the one without a human turn is skipped)", d.Format, len(d.Entries))
	}
	a := d.Entries[0]
	if len(a.Messages) != 2 || a.Messages[0].Role != "system" || a.Messages[1].Content != "q1" || !equalS(a.Turns, []string{"q1", "q2"}) {
		t.Errorf("entry a = %+v", a)
	}
	if d.Entries[1].Index != 2 {
		t.Errorf("entry c has index %d, want 2 (its place in the file)", d.Entries[1].Index)
	}
}

func TestLoadDatasetFiltersAndSample(t *testing.T) {
	var b strings.Builder
	for i := range 20 {
		out := []string{"8", "16", "32", "64"}[i%4]
		b.WriteString(`{"prompt": "p` + strings.Repeat("x", i) + `", "output_tokens": ` + out + "}\n")
	}
	p := writeFile(t, "d.jsonl", b.String())
	d, err := LoadDataset(p, DatasetOptions{MinOutputTokens: 16, MaxOutputTokens: 32, MaxPromptChars: 15})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Entries {
		if e.OutputTokens < 16 || e.OutputTokens > 32 || len(e.Messages[0].Content) > 15 {
			t.Errorf("entry %d passed the filters: %+v", e.Index, e)
		}
	}
	if len(d.Entries)+d.Dropped != 20 || len(d.Entries) != 8 {
		t.Errorf("%d kept + %d dropped, want 8 + 12", len(d.Entries), d.Dropped)
	}
	s1, _ := LoadDataset(p, DatasetOptions{Sample: 5, Seed: 3})
	s2, _ := LoadDataset(p, DatasetOptions{Sample: 5, Seed: 3})
	s3, _ := LoadDataset(p, DatasetOptions{Sample: 5, Seed: 4})
	idx := func(d *Dataset) (out []int) {
		for _, e := range d.Entries {
			out = append(out, e.Index)
		}
		return out
	}
	if len(s1.Entries) != 5 || !equal(idx(s1), idx(s2)) || equal(idx(s1), idx(s3)) {
		t.Errorf("samples: seed 3 %v and %v, seed 4 %v: want 5 entries, equal for the same seed only", idx(s1), idx(s2), idx(s3))
	}
	for i := 1; i < 5; i++ {
		if idx(s1)[i] <= idx(s1)[i-1] {
			t.Errorf("sample %v is not in file order", idx(s1))
		}
	}
}

func TestLoadDatasetErrors(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"{\"prompt\": \"a\"}\nnot json\n", "line 2"},
		{`{"prompt": "a", "messages": [{"role": "user", "content": "b"}]}`, "both prompt and messages"},
		{`{"output_tokens": 3}`, "neither messages nor prompt"},
		{`{"prompt": "a", "output_tokens": 0}`, "at least 1"},
		{`{"messages": [{"content": "a"}]}`, "no role"},
		{"\n\n", "no entries"},
		{`[{"conversations": [{"from": "gpt", "value": "x"}]}]`, "no conversation has a human turn"},
	} {
		_, err := LoadDataset(writeFile(t, "d.jsonl", tt.body), DatasetOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want one containing %q", tt.body, err, tt.want)
		}
	}
	if _, err := LoadDataset(filepath.Join(t.TempDir(), "missing.jsonl"), DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "--dataset") {
		t.Errorf("missing file: %v", err)
	}
	p := writeFile(t, "d.jsonl", `{"prompt": "a", "output_tokens": 100}`)
	if _, err := LoadDataset(p, DatasetOptions{MaxOutputTokens: 10}); err == nil || !strings.Contains(err.Error(), "dropped all 1") {
		t.Errorf("everything filtered: %v", err)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalS(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }
