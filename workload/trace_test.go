package workload

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestLoadTrace(t *testing.T) {
	p := writeFile(t, "t.jsonl", `{"timestamp": 1500, "input_length": 64, "output_length": 4, "hash_ids": [1, 2]}
{"timestamp": 1000, "input_length": 32, "output_length": 8}

{"timestamp": 3000, "input_length": 16, "output_length": 2, "hash_ids": [1], "extra": true}
`)
	tr, err := LoadTrace(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) != 3 || tr.Entries[0].ContextTokens != 32 || tr.Entries[1].At != 500*time.Millisecond || tr.Entries[2].At != 2*time.Second {
		t.Fatalf("entries %+v: want sorted by timestamp, times from the first", tr.Entries)
	}
	if s := tr.Schedule(2); s[1] != 250*time.Millisecond || s[2] != time.Second {
		t.Errorf("schedule at 2× %v", s)
	}
	for body, want := range map[string]string{
		`{"timestamp": 1, "input_length": 0, "output_length": 1}`: "input_length",
		`{"input_length": 5, "output_length": 1}`:                 "timestamp",
		`nope`: "line 1",
		"\n":   "no requests",
	} {
		if _, err := LoadTrace(writeFile(t, "t.jsonl", body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", body, err, want)
		}
	}
}

// Blocks named by the same hash id are the same text; the prompt has exactly the asked length
// (as the simulator counts it); the rest is unique to the request.
func TestBlockPrompt(t *testing.T) {
	count := simCounter(7)
	b, err := NewBuilderWithCounter(context.Background(), Config{RunID: "r"}, count, "test")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := b.BlockPrompt(1, []int{5, 6, 7}, 16, 100)
	c, _ := b.BlockPrompt(2, []int{5, 6, 9}, 16, 100)
	d, _ := b.BlockPrompt(3, nil, 16, 100)
	for _, p := range []string{a, c, d} {
		if n, _ := count(context.Background(), p); n != 100 {
			t.Errorf("prompt counts %d tokens, want 100", n)
		}
	}
	prefix := func(x, y string) int {
		n, _ := count(context.Background(), x[:commonPrefix(x, y)])
		return n
	}
	if shared := prefix(a, c); shared < 7+1+32 || shared >= 7+1+48 {
		t.Errorf("requests sharing 2 of 3 blocks share %d tokens, want the lead and 32 block tokens (< 48)", shared)
	}
	if shared := prefix(a, d); shared > 7+1+1 {
		t.Errorf("a request without blocks shares %d tokens with one with blocks", shared)
	}
	cut, _ := b.BlockPrompt(4, []int{5, 6, 7, 8, 9}, 16, 40)
	if n, _ := count(context.Background(), cut); n != 40 || !strings.HasPrefix(a, cut[:commonPrefix(a, cut)]) {
		t.Errorf("blocks beyond the length are cut: %d tokens", n)
	}
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// A trace whose requests share one timestamp has no schedule and no rate: refused with the fix.
func TestTraceAtOneInstantRefused(t *testing.T) {
	p := writeFile(t, "t.jsonl", `{"timestamp": 7, "input_length": 64, "output_length": 4}
{"timestamp": 7, "input_length": 32, "output_length": 8}
`)
	_, err := LoadTrace(p)
	if err == nil || !strings.Contains(err.Error(), "no arrival rate") || !strings.Contains(err.Error(), "--mode fixed --requests 2") {
		t.Fatalf("one-instant trace: %v, want a refusal naming the fixed-mode burst", err)
	}
}
