package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	hf := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(hf, []byte(`{"model":{"type":"BPE"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		in       string
		wantName string // "" means an error is expected
		errHas   string
	}{
		// built-in encoding by name
		{"cl100k", "cl100k_base", "cl100k_base", ""},
		// names are case-insensitive
		{"o200k upper", "O200K_BASE", "o200k_base", ""},
		// an OpenAI model name maps to its encoding
		{"model name", "gpt-4o", "o200k_base", ""},
		// a Hugging Face file is refused honestly, with alternatives
		{"hf json", hf, "", "not supported yet"},
		// a missing file says so
		{"missing file", filepath.Join(dir, "nope.json"), "", "no such file"},
		// an unknown name lists what is accepted
		{"unknown", "llama-bpe", "", "cl100k_base"},
		// empty
		{"empty", "", "", "no tokenizer named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Open(tc.in)
			if tc.wantName == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("Open(%q) error = %v, want one containing %q", tc.in, err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tok.Name() != tc.wantName {
				t.Fatalf("Name() = %q, want %q", tok.Name(), tc.wantName)
			}
		})
	}
	if _, err := Open(hf); !errors.Is(err, ErrHFNotSupported) {
		t.Fatalf("want ErrHFNotSupported, got %v", err)
	}
}

func TestCount(t *testing.T) {
	tok, err := Open("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},                   // nothing
		{"hello world", 2},        // two common words
		{" the the the", 3},       // repeated common word with leading spaces
		{"tiktoken is great!", 6}, // "t","ik","token"," is"," great","!" in cl100k
	} {
		if got := tok.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
