package tinymodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

// reader is a minimal GGUF v3 parser, independent of the writer's code, for the tests.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if r.off+n > len(r.b) {
		r.err = fmt.Errorf("truncated at %d reading %d bytes", r.off, n)
		return make([]byte, n)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}
func (r *reader) u8() uint8   { return r.take(1)[0] }
func (r *reader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *reader) str() string {
	n := r.u64()
	if n > 1<<20 {
		r.err = fmt.Errorf("string length %d at %d", n, r.off)
		return ""
	}
	return string(r.take(int(n)))
}

func (r *reader) value(typ uint32) any {
	switch typ {
	case 4:
		return r.u32()
	case 5:
		return int32(r.u32())
	case 6:
		return math.Float32frombits(r.u32())
	case 7:
		return r.u8() != 0
	case 8:
		return r.str()
	case 9:
		et, n := r.u32(), r.u64()
		out := make([]any, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			out = append(out, r.value(et))
		}
		return out
	}
	r.err = fmt.Errorf("unexpected value type %d at %d", typ, r.off)
	return nil
}

type parsedTensor struct {
	dims   []uint64
	typ    uint32
	offset uint64
}

type parsed struct {
	version uint32
	kv      map[string]any
	keys    []string
	names   []string
	tensors map[string]parsedTensor
	data    []byte // from the aligned start of the data section
}

func parse(t *testing.T, b []byte) *parsed {
	t.Helper()
	r := &reader{b: b}
	if magic := string(r.take(4)); magic != "GGUF" {
		t.Fatalf("magic %q, want GGUF", magic)
	}
	p := &parsed{version: r.u32(), kv: map[string]any{}, tensors: map[string]parsedTensor{}}
	nt, nkv := r.u64(), r.u64()
	for i := uint64(0); i < nkv && r.err == nil; i++ {
		k := r.str()
		p.keys = append(p.keys, k)
		p.kv[k] = r.value(r.u32())
	}
	for i := uint64(0); i < nt && r.err == nil; i++ {
		name := r.str()
		nd := r.u32()
		var dims []uint64
		for j := uint32(0); j < nd; j++ {
			dims = append(dims, r.u64())
		}
		p.names = append(p.names, name)
		p.tensors[name] = parsedTensor{dims: dims, typ: r.u32(), offset: r.u64()}
	}
	if r.err != nil {
		t.Fatalf("parse: %v", r.err)
	}
	start := (r.off + 31) / 32 * 32
	if start > len(b) {
		t.Fatalf("data section starts at %d past the end %d", start, len(b))
	}
	for _, pad := range b[r.off:start] {
		if pad != 0 {
			t.Fatalf("non-zero padding before the data section")
		}
	}
	p.data = b[start:]
	return p
}

func (p *parsed) floats(t *testing.T, name string) ([]float32, []uint64) {
	t.Helper()
	ti, ok := p.tensors[name]
	if !ok {
		t.Fatalf("no tensor %s", name)
	}
	n := uint64(1)
	for _, d := range ti.dims {
		n *= d
	}
	out := make([]float32, n)
	for i := range out {
		switch ti.typ {
		case 0:
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(p.data[ti.offset+uint64(i)*4:]))
		case 1:
			out[i] = half(binary.LittleEndian.Uint16(p.data[ti.offset+uint64(i)*2:]))
		default:
			t.Fatalf("%s: type %d", name, ti.typ)
		}
	}
	return out, ti.dims
}

// half decodes IEEE 754 binary16.
func half(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, mant := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * float32(math.Ldexp(mant, -24))
	case 31:
		if mant != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(1+mant/1024, exp-15))
}

func write(t *testing.T, size Size, seed int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, size, seed); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteTinyStructure(t *testing.T) {
	b := write(t, Tiny, 1)
	p := parse(t, b)
	if p.version != 3 {
		t.Fatalf("version %d, want 3", p.version)
	}
	sh, _ := Tiny.Shape()
	wantKV := map[string]any{
		"general.architecture":                   "llama",
		"general.alignment":                      uint32(32),
		"general.file_type":                      uint32(1),
		"llama.context_length":                   uint32(32768),
		"llama.embedding_length":                 uint32(256),
		"llama.block_count":                      uint32(4),
		"llama.feed_forward_length":              uint32(768),
		"llama.attention.head_count":             uint32(4),
		"llama.attention.head_count_kv":          uint32(4),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.freq_base":                   float32(10000),
		"llama.rope.dimension_count":             uint32(64),
		"llama.vocab_size":                       uint32(VocabSize),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.unknown_token_id":        uint32(0),
		"tokenizer.ggml.add_bos_token":           true,
	}
	for k, want := range wantKV {
		if got := p.kv[k]; got != want {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	if _, ok := p.kv["general.name"].(string); !ok {
		t.Errorf("general.name missing")
	}
	toks, _ := p.kv["tokenizer.ggml.tokens"].([]any)
	scores, _ := p.kv["tokenizer.ggml.scores"].([]any)
	types, _ := p.kv["tokenizer.ggml.token_type"].([]any)
	if len(toks) != VocabSize || len(scores) != VocabSize || len(types) != VocabSize {
		t.Fatalf("vocab arrays %d/%d/%d, want %d", len(toks), len(scores), len(types), VocabSize)
	}
	// Every id the constants name holds the token they say; tokens are unique.
	for id, want := range map[int]string{UnknownID: "<unk>", BOSID: "<s>", EOSID: "</s>",
		FirstByteID: "<0x00>", FirstByteID + 0x0A: "<0x0A>", FirstByteID + 255: "<0xFF>",
		SpaceID: "\u2581", FirstCharID: "!", FirstCharID + ('a' - '!'): "a", VocabSize - 1: "~"} {
		if toks[id] != want {
			t.Errorf("token %d = %q, want %q", id, toks[id], want)
		}
	}
	seen := map[any]bool{}
	for _, tk := range toks {
		if seen[tk] {
			t.Errorf("duplicate token %q", tk)
		}
		seen[tk] = true
	}

	wantTensors := 1 + 9*sh.Layers + 2 // token_embd, 9 per block, output_norm and output
	if len(p.names) != wantTensors {
		t.Fatalf("%d tensors, want %d", len(p.names), wantTensors)
	}
	if p.names[0] != "token_embd.weight" || p.names[len(p.names)-1] != "output.weight" {
		t.Errorf("first/last tensors %s/%s", p.names[0], p.names[len(p.names)-1])
	}
	// Offsets are aligned, in order, non-overlapping and the data fits the file exactly.
	var end uint64
	var params uint64
	for _, n := range p.names {
		ti := p.tensors[n]
		if ti.offset%32 != 0 || ti.offset < end {
			t.Errorf("%s offset %d (previous end %d)", n, ti.offset, end)
		}
		elems := uint64(1)
		for _, d := range ti.dims {
			elems *= d
		}
		params += elems
		width := uint64(2)
		if len(ti.dims) == 1 {
			width = 4
			if ti.typ != 0 {
				t.Errorf("%s: norm vector type %d, want F32", n, ti.typ)
			}
		} else if ti.typ != 1 {
			t.Errorf("%s: matrix type %d, want F16", n, ti.typ)
		}
		end = ti.offset + elems*width
	}
	if padded := (end + 31) / 32 * 32; uint64(len(p.data)) != padded {
		t.Errorf("data section %d bytes, want %d", len(p.data), padded)
	}
	if int64(params) != sh.Parameters() {
		t.Errorf("%d parameters, Parameters() says %d", params, sh.Parameters())
	}
	if q := p.tensors["blk.0.ffn_down.weight"].dims; len(q) != 2 || q[0] != 768 || q[1] != 256 {
		t.Errorf("ffn_down dims %v, want [768 256]", q)
	}
}

func TestWriteDeterministic(t *testing.T) {
	a, b, c := write(t, Tiny, 1), write(t, Tiny, 1), write(t, Tiny, 2)
	if !bytes.Equal(a, b) {
		t.Error("same size and seed gave different files")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 gave the same file")
	}
}

func TestSmallShape(t *testing.T) {
	p := parse(t, write(t, Small, 1))
	if p.kv["llama.embedding_length"] != uint32(512) || p.kv["llama.block_count"] != uint32(6) {
		t.Errorf("small: embedding %v, blocks %v", p.kv["llama.embedding_length"], p.kv["llama.block_count"])
	}
	sh, _ := Small.Shape()
	if got := sh.Parameters(); got < 20_000_000 || got > 21_500_000 {
		t.Errorf("small has %d parameters, want about 20.8 M", got)
	}
}

func TestUnknownSize(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "huge", 1); err == nil {
		t.Fatal("want an error for an unknown size")
	}
}

func TestF16(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},               // zero
		{1, 0x3c00},               // one
		{-2, 0xc000},              // negative power of two
		{65504, 0x7bff},           // largest finite half
		{1e6, 0x7c00},             // overflow to +Inf
		{0.1, 0x2e66},             // rounded to nearest
		{5.960464477539063e-8, 1}, // smallest subnormal
		{1e-9, 0},                 // underflow to zero
		{1 + 1.0/2048, 0x3c00},    // tie rounds to even (down)
		{1 + 3.0/2048, 0x3c02},    // tie rounds to even (up)
		{-10, 0xc900},             // the special-row weight
	} {
		if got := f16(tc.in); got != tc.want {
			t.Errorf("f16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

// TestGreedySuccessor runs the model's forward pass for a one-token sequence (where attention
// returns v itself) from the parsed file and checks what generation depends on: for every text
// token the argmax is its cycle successor (never itself), and the special and byte tokens sit
// far below it, so EOS can never be sampled.
func TestGreedySuccessor(t *testing.T) {
	for _, size := range []Size{Tiny, Small} {
		t.Run(string(size), func(t *testing.T) {
			p := parse(t, write(t, size, 7))
			sh, _ := size.Shape()
			d := sh.Embedding
			embd, _ := p.floats(t, "token_embd.weight")
			out, _ := p.floats(t, "output.weight")
			matvec := func(w []float32, in []float32, rows int) []float32 {
				cols := len(in)
				y := make([]float32, rows)
				for r := 0; r < rows; r++ {
					var s float32
					for c, x := range in {
						s += w[r*cols+c] * x
					}
					y[r] = s
				}
				return y
			}
			rms := func(h, w []float32) []float32 {
				var ss float64
				for _, v := range h {
					ss += float64(v) * float64(v)
				}
				k := float32(1 / math.Sqrt(ss/float64(len(h))+1e-5))
				y := make([]float32, len(h))
				for i := range h {
					y[i] = h[i] * k * w[i]
				}
				return y
			}
			type layer struct{ an, v, o, fn, g, u, dn []float32 }
			layers := make([]layer, sh.Layers)
			for l := range layers {
				f := func(s string) []float32 { x, _ := p.floats(t, fmt.Sprintf("blk.%d.%s.weight", l, s)); return x }
				layers[l] = layer{f("attn_norm"), f("attn_v"), f("attn_output"), f("ffn_norm"), f("ffn_gate"), f("ffn_up"), f("ffn_down")}
			}
			onorm, _ := p.floats(t, "output_norm.weight")
			next := newWeights(sh, 7).next
			cycle := map[int]bool{}
			for tok := SpaceID; tok < VocabSize; tok++ {
				h := append([]float32(nil), embd[tok*d:(tok+1)*d]...)
				for _, L := range layers {
					a := matvec(L.o, matvec(L.v, rms(h, L.an), d), d)
					for i := range h {
						h[i] += a[i]
					}
					x := rms(h, L.fn)
					g, u := matvec(L.g, x, sh.FFN), matvec(L.u, x, sh.FFN)
					for i := range g {
						g[i] = g[i] / (1 + float32(math.Exp(float64(-g[i])))) * u[i]
					}
					m := matvec(L.dn, g, d)
					for i := range h {
						h[i] += m[i]
					}
				}
				logits := matvec(out, rms(h, onorm), VocabSize)
				best, second := 0, -1
				for i := range logits {
					if logits[i] > logits[best] {
						best = i
					}
				}
				for i := range logits {
					if i != best && (second < 0 || logits[i] > logits[second]) {
						second = i
					}
				}
				if best != next[tok] || best == tok {
					t.Fatalf("token %d: argmax %d, want successor %d", tok, best, next[tok])
				}
				if margin := logits[best] - logits[second]; margin < 8 {
					t.Errorf("token %d: successor margin %.2f, want >= 8 so sampling follows the cycle", tok, margin)
				}
				for id := 0; id < SpaceID; id++ {
					if logits[id] > logits[best]-50 {
						t.Fatalf("token %d: non-text token %d logit %.1f too close to the best %.1f", tok, id, logits[id], logits[best])
					}
				}
				cycle[best] = true
			}
			if len(cycle) != VocabSize-SpaceID {
				t.Errorf("successors cover %d text tokens, want all %d (one cycle)", len(cycle), VocabSize-SpaceID)
			}
		})
	}
}
