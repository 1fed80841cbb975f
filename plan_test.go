package servebench

import (
	"encoding/json"
	"testing"
)

func TestTokensJSONRoundTrip(t *testing.T) {
	in := Sweep{Contexts: []Tokens{1024, 2000}, OutputTokens: 64}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Sweep
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if len(out.Contexts) != 2 || out.Contexts[1] != 2000 || out.OutputTokens != 64 {
		t.Fatalf("round trip: %+v", out)
	}
	var s struct{ T Tokens }
	if err := json.Unmarshal([]byte(`{"T":"8k"}`), &s); err != nil || s.T != 8192 {
		t.Fatalf("string form: %v %v", s.T, err)
	}
	if err := json.Unmarshal([]byte(`{"T":"eight"}`), &s); err == nil {
		t.Fatal("want an error for a bad count")
	}
}

func TestDeriveFormulas(t *testing.T) {
	rec := Record{OutputTokens: 101, Chunks: 50}
	Derive(&rec, Timing{FirstToken: 200e6, FirstContent: 200e6, LastToken: 1200e6, End: 1250e6})
	if rec.TTFTSeconds != 0.2 || rec.E2ELatencySeconds != 1.25 || rec.DecodeSeconds != 1.0 {
		t.Fatalf("times: %+v", rec)
	}
	if rec.ITLSeconds != 0.01 || rec.GenerationSpeedTPS != 100 || rec.TokensPerChunk != 2.02 {
		t.Fatalf("itl %v speed %v tpc %v", rec.ITLSeconds, rec.GenerationSpeedTPS, rec.TokensPerChunk)
	}
	one := Record{OutputTokens: 1}
	Derive(&one, Timing{FirstToken: 1e6, LastToken: 1e6, End: 2e6})
	if one.ITLSeconds != 0 || one.GenerationSpeedTPS != 0 || Measurable(&one) {
		t.Fatal("one token: ITL and speed are undefined")
	}
}
