package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{}`, true},
		{` {"a":1} `, true},
		{"\t[\n1 , 2\r]\n", true},
		{`{"choices":[{"delta":{"content":" tok"},"finish_reason":null}],"usage":null}`, true},
		{`"é \u00e9 \/ \" \\ \b\f\n\r\t"`, true},
		{"\"\xff\xfe\"", true}, // encoding/json accepts invalid UTF-8 inside strings
		{`0`, true}, {`-0`, true}, {`-0.5e+10`, true}, {`1E-2`, true}, {`123.456`, true},
		{`true`, true}, {`false`, true}, {`null`, true},
		{`[[],{},[{}]]`, true},
		{``, false}, {` `, false},
		{`{`, false}, {`}`, false}, {`[1,]`, false}, {`{"a":1,}`, false}, {`{"a"}`, false},
		{`{"a" 1}`, false}, {`{a:1}`, false}, {`{"a":1 "b":2}`, false}, {`[1 2]`, false},
		{`01`, false}, {`-`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false}, {`1e+`, false},
		{`+1`, false}, {`0x10`, false}, {`NaN`, false}, {`tru`, false}, {`nul`, false}, {`True`, false},
		{`"abc`, false}, {`"\x"`, false}, {`"\u12"`, false}, {`"\u12g4"`, false}, {"\"a\nb\"", false},
		{"\"\x00\"", false}, {`"\`, false}, {`"\u`, false},
		{`{} {}`, false}, {`1 2`, false}, {`[1]]`, false},
	} {
		if got := validJSON([]byte(tc.in)); got != tc.want {
			t.Errorf("validJSON(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if got := json.Valid([]byte(tc.in)); got != tc.want { // the table itself is right
			t.Errorf("json.Valid(%q) = %v: the table is wrong", tc.in, got)
		}
	}
}

// TestValidJSONDepth checks the nesting limit at its edge, as encoding/json draws it.
func TestValidJSONDepth(t *testing.T) {
	for _, n := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			s := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(closer, n))
			if got, want := validJSON(s), json.Valid(s); got != want {
				t.Errorf("%d × %q: validJSON %v, json.Valid %v", n, open, got, want)
			}
		}
	}
}

// FuzzValidJSON: validJSON and encoding/json.Valid agree on every input.
func FuzzValidJSON(f *testing.F) {
	files, _ := filepath.Glob("testdata/transcripts/*")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				f.Add([]byte(d))
			}
		}
	}
	for _, s := range []string{`{"a":[1,-2.5e3,true,false,null,"\u00e9\n"]}`, `[`, `"\u`, `-`, `1e+`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	ev := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}`)
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for b.Loop() {
			if !validJSON(ev) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for b.Loop() {
			if !json.Valid(ev) {
				b.Fatal("invalid")
			}
		}
	})
}
