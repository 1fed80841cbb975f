// Package tinymodel writes a small llama-architecture model with random weights as a GGUF file,
// so that the end-to-end tests can run a real inference engine (Ollama, llama.cpp) without a
// model hub.
//
// The file is GGUF version 3 with 32-byte alignment: F16 two-dimensional weights, F32 norm
// vectors, an untied output matrix and a SentencePiece ("llama") vocabulary of
//
//	<unk>, <s>, </s>, the 256 byte-fallback tokens <0x00>…<0xFF>, ▁ and the 94 printable
//	ASCII characters '!'…'~'
//
// so that an ASCII prompt is exactly one token per byte (a space is ▁, any other byte such as
// '\n' falls back to its byte token), plus one BOS token when the engine adds it.
//
// The random weights are shaped so that generation never stops early:
//
//   - Embedding dimension 0 holds the constant C = √d for every token and no layer writes it
//     (row 0 of attn_output and ffn_down is zero), so after the final RMS norm it is about
//     C/rms(h) ≈ 11 for d = 256. The output rows of the special and byte tokens weigh that
//     dimension by −10, a logit near −110: end-of-sequence is never sampled and the output is
//     printable text.
//   - The text tokens (▁ and '!'…'~') form one random cycle; the output row of next(t) is
//     s/d · e(t) over dimensions 1…d−1 (s = 30), so a text token's likeliest successor is the
//     next one in the cycle by a logit margin of about 20. Greedy decoding therefore never
//     emits the same token twice in a row (Ollama silently ends a stream after 31 identical
//     tokens), and sampling at temperature 1 follows the cycle almost always.
//   - All other weights are N(0, 0.02²), small enough that the layers perturb the residual
//     stream without changing the successor; they still cost the full compute of the shape.
//
// The output depends only on (size, seed): the same pair always yields the same bytes.
package tinymodel

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Size names a model shape: "tiny" or "small".
type Size string

// The shapes Write knows.
const (
	// Tiny: embedding 256, 4 layers, 4 heads, FFN 768 — 3.6 M parameters, about 7 MB.
	Tiny Size = "tiny"
	// Small: embedding 512, 6 layers, 8 heads, FFN 1536 — 20.8 M parameters, about 42 MB.
	Small Size = "small"
)

// Shape is the architecture of a Size.
type Shape struct {
	Embedding int // llama.embedding_length, d
	Layers    int // llama.block_count
	Heads     int // llama.attention.head_count (= head_count_kv); head dimension d/Heads
	FFN       int // llama.feed_forward_length
}

// Shape returns the architecture of s, or an error naming the known sizes.
func (s Size) Shape() (Shape, error) {
	switch s {
	case Tiny:
		return Shape{Embedding: 256, Layers: 4, Heads: 4, FFN: 768}, nil
	case Small:
		return Shape{Embedding: 512, Layers: 6, Heads: 8, FFN: 1536}, nil
	}
	return Shape{}, fmt.Errorf("tinymodel: unknown size %q (want %q or %q)", string(s), Tiny, Small)
}

// Parameters is the number of weights in the shape: 2·V·d for the embedding and output
// matrices, plus per layer 4·d² (attention) + 3·d·FFN (MLP) + 2·d (norms), plus d.
func (sh Shape) Parameters() int64 {
	d, f, v := int64(sh.Embedding), int64(sh.FFN), int64(VocabSize)
	return 2*v*d + int64(sh.Layers)*(4*d*d+3*d*f+2*d) + d
}

// Token ids of the vocabulary.
const (
	UnknownID   = 0   // <unk>
	BOSID       = 1   // <s>
	EOSID       = 2   // </s>
	FirstByteID = 3   // <0x00>; byte b is FirstByteID+b
	SpaceID     = 259 // ▁ (U+2581), a space
	FirstCharID = 260 // '!'; printable ASCII c in '!'…'~' is FirstCharID+(c-'!')
	VocabSize   = 354 // 3 specials + 256 bytes + ▁ + 94 characters
)

// ContextLength is the llama.context_length the file declares.
const ContextLength = 32768

// SentencePiece token types (llama.cpp's llama_token_type).
const (
	typeNormal  = 1
	typeUnknown = 2
	typeControl = 3
	typeByte    = 6
)

// Vocabulary returns the tokens, scores and token types in id order.
func Vocabulary() (tokens []string, scores []float32, types []int32) {
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, typeUnknown, typeControl, typeControl)
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, typeByte)
	}
	tokens = append(tokens, "\u2581")
	types = append(types, typeNormal)
	for c := '!'; c <= '~'; c++ {
		tokens = append(tokens, string(c))
		types = append(types, typeNormal)
	}
	scores = make([]float32, len(tokens))
	for i := range scores {
		if types[i] == typeNormal {
			scores[i] = -float32(i) // no merges exist; scores only order ties
		}
	}
	return tokens, scores, types
}

// isText reports whether id is a text token (▁ or a printable character), the only tokens the
// model ever generates.
func isText(id int) bool { return id >= SpaceID }

// Write writes the GGUF model of the given size, its weights drawn from seed, to w.
func Write(w io.Writer, size Size, seed int64) error {
	sh, err := size.Shape()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	g := &gguf{w: bw}
	tensors := layout(sh)
	g.header(sh, size, len(tensors))
	var off uint64
	for _, t := range tensors {
		g.str(t.name)
		g.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			g.u64(uint64(d))
		}
		g.u32(t.typ)
		g.u64(off)
		off += align(t.bytes())
	}
	g.pad()
	m := newWeights(sh, seed)
	for _, t := range tensors {
		data := m.tensor(t)
		if t.typ == ggmlF32 {
			for _, v := range data {
				g.u32(math.Float32bits(v))
			}
		} else {
			for _, v := range data {
				g.u16(f16(v))
			}
		}
		g.pad()
	}
	if g.err != nil {
		return fmt.Errorf("tinymodel: writing GGUF: %w", g.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("tinymodel: writing GGUF: %w", err)
	}
	return nil
}

// Alignment is the general.alignment of the file, in bytes.
const Alignment = 32

func align(n uint64) uint64 { return (n + Alignment - 1) / Alignment * Alignment }

const (
	ggmlF32 = 0
	ggmlF16 = 1
)

type tensorInfo struct {
	name string
	dims []int // ggml order: dims[0] is the contiguous (input) dimension
	typ  uint32
}

func (t tensorInfo) elems() int {
	n := 1
	for _, d := range t.dims {
		n *= d
	}
	return n
}

func (t tensorInfo) bytes() uint64 {
	if t.typ == ggmlF32 {
		return uint64(t.elems()) * 4
	}
	return uint64(t.elems()) * 2
}

// layout lists the tensors in file order.
func layout(sh Shape) []tensorInfo {
	d, f := sh.Embedding, sh.FFN
	ts := []tensorInfo{{"token_embd.weight", []int{d, VocabSize}, ggmlF16}}
	for l := 0; l < sh.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensorInfo{p + "attn_norm.weight", []int{d}, ggmlF32},
			tensorInfo{p + "attn_q.weight", []int{d, d}, ggmlF16},
			tensorInfo{p + "attn_k.weight", []int{d, d}, ggmlF16},
			tensorInfo{p + "attn_v.weight", []int{d, d}, ggmlF16},
			tensorInfo{p + "attn_output.weight", []int{d, d}, ggmlF16},
			tensorInfo{p + "ffn_norm.weight", []int{d}, ggmlF32},
			tensorInfo{p + "ffn_gate.weight", []int{d, f}, ggmlF16},
			tensorInfo{p + "ffn_up.weight", []int{d, f}, ggmlF16},
			tensorInfo{p + "ffn_down.weight", []int{f, d}, ggmlF16},
		)
	}
	return append(ts,
		tensorInfo{"output_norm.weight", []int{d}, ggmlF32},
		tensorInfo{"output.weight", []int{d, VocabSize}, ggmlF16},
	)
}

// weights draws the tensors in file order from one seeded generator.
type weights struct {
	sh   Shape
	rng  *rand.Rand
	embd []float32 // token_embd, kept to build output.weight
	next []int     // next[t]: the successor of text token t in the cycle, -1 for other tokens
}

const (
	weightStd     = 0.02 // standard deviation of the ordinary weights
	successorGain = 30   // s: logit scale of the cycle successor
	specialWeight = -10  // weight of dimension 0 in special and byte output rows
)

func newWeights(sh Shape, seed int64) *weights {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7469_6e79_6d6f_646c)) // "tinymodl"
	next := make([]int, VocabSize)
	for i := range next {
		next[i] = -1
	}
	text := make([]int, 0, VocabSize-SpaceID)
	for id := SpaceID; id < VocabSize; id++ {
		text = append(text, id)
	}
	rng.Shuffle(len(text), func(i, j int) { text[i], text[j] = text[j], text[i] })
	for k, id := range text {
		next[id] = text[(k+1)%len(text)]
	}
	return &weights{sh: sh, rng: rng, next: next}
}

func (m *weights) normal(n int, std float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(m.rng.NormFloat64() * std)
	}
	return out
}

func (m *weights) tensor(t tensorInfo) []float32 {
	d := m.sh.Embedding
	switch {
	case t.name == "token_embd.weight":
		e := m.normal(t.elems(), 1)
		for tok := 0; tok < VocabSize; tok++ {
			e[tok*d] = float32(math.Sqrt(float64(d)))
		}
		m.embd = e
		return e
	case t.name == "output.weight":
		out := m.normal(t.elems(), weightStd)
		for tok := 0; tok < VocabSize; tok++ {
			row := out[tok*d : (tok+1)*d]
			if !isText(tok) {
				row[0] = specialWeight
			} else {
				row[0] = 0
			}
		}
		for tok := SpaceID; tok < VocabSize; tok++ {
			row := out[m.next[tok]*d : (m.next[tok]+1)*d]
			src := m.embd[tok*d : (tok+1)*d]
			for i := 1; i < d; i++ {
				row[i] = successorGain / float32(d) * src[i]
			}
		}
		return out
	case len(t.dims) == 1: // norms
		out := make([]float32, t.elems())
		for i := range out {
			out[i] = 1
		}
		return out
	default:
		w := m.normal(t.elems(), weightStd)
		if hasSuffix(t.name, "attn_output.weight") || hasSuffix(t.name, "ffn_down.weight") {
			clear(w[:t.dims[0]]) // output row 0: no layer writes the constant dimension
		}
		return w
	}
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// f16 converts to IEEE 754 half precision, rounding to nearest even.
func f16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case (b>>23)&0xff == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is still correct
	}
	return sign | uint16(h)
}

// gguf writes GGUF primitives, keeping the first error.
type gguf struct {
	w   io.Writer
	n   uint64
	err error
	buf [8]byte
}

func (g *gguf) write(p []byte) {
	if g.err != nil {
		return
	}
	_, g.err = g.w.Write(p)
	g.n += uint64(len(p))
}

func (g *gguf) u16(v uint16) { binary.LittleEndian.PutUint16(g.buf[:2], v); g.write(g.buf[:2]) }
func (g *gguf) u32(v uint32) { binary.LittleEndian.PutUint32(g.buf[:4], v); g.write(g.buf[:4]) }
func (g *gguf) u64(v uint64) { binary.LittleEndian.PutUint64(g.buf[:8], v); g.write(g.buf[:8]) }
func (g *gguf) str(s string) { g.u64(uint64(len(s))); g.write([]byte(s)) }

func (g *gguf) pad() {
	if p := align(g.n) - g.n; p > 0 {
		g.write(make([]byte, p))
	}
}

// GGUF metadata value types.
const (
	kvUint32  = 4
	kvInt32   = 5
	kvFloat32 = 6
	kvBool    = 7
	kvString  = 8
	kvArray   = 9
)

func (g *gguf) kvU32(k string, v uint32)  { g.str(k); g.u32(kvUint32); g.u32(v) }
func (g *gguf) kvF32(k string, v float32) { g.str(k); g.u32(kvFloat32); g.u32(math.Float32bits(v)) }
func (g *gguf) kvStr(k, v string)         { g.str(k); g.u32(kvString); g.str(v) }
func (g *gguf) kvBool(k string, v bool) {
	g.str(k)
	g.u32(kvBool)
	if v {
		g.write([]byte{1})
	} else {
		g.write([]byte{0})
	}
}

func (g *gguf) header(sh Shape, size Size, nTensors int) {
	tokens, scores, types := Vocabulary()
	const nKV = 24
	g.write([]byte("GGUF"))
	g.u32(3)
	g.u64(uint64(nTensors))
	g.u64(nKV)
	g.kvStr("general.architecture", "llama")
	g.kvStr("general.name", "servebench-"+string(size))
	g.kvU32("general.alignment", Alignment)
	g.kvU32("general.file_type", 1) // LLAMA_FTYPE_MOSTLY_F16
	g.kvU32("llama.context_length", ContextLength)
	g.kvU32("llama.embedding_length", uint32(sh.Embedding))
	g.kvU32("llama.block_count", uint32(sh.Layers))
	g.kvU32("llama.feed_forward_length", uint32(sh.FFN))
	g.kvU32("llama.attention.head_count", uint32(sh.Heads))
	g.kvU32("llama.attention.head_count_kv", uint32(sh.Heads))
	g.kvF32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	g.kvF32("llama.rope.freq_base", 10000)
	g.kvU32("llama.rope.dimension_count", uint32(sh.Embedding/sh.Heads))
	g.kvU32("llama.vocab_size", VocabSize)
	g.kvStr("tokenizer.ggml.model", "llama")
	g.str("tokenizer.ggml.tokens")
	g.u32(kvArray)
	g.u32(kvString)
	g.u64(uint64(len(tokens)))
	for _, t := range tokens {
		g.str(t)
	}
	g.str("tokenizer.ggml.scores")
	g.u32(kvArray)
	g.u32(kvFloat32)
	g.u64(uint64(len(scores)))
	for _, s := range scores {
		g.u32(math.Float32bits(s))
	}
	g.str("tokenizer.ggml.token_type")
	g.u32(kvArray)
	g.u32(kvInt32)
	g.u64(uint64(len(types)))
	for _, t := range types {
		g.u32(uint32(t))
	}
	g.kvU32("tokenizer.ggml.bos_token_id", BOSID)
	g.kvU32("tokenizer.ggml.eos_token_id", EOSID)
	g.kvU32("tokenizer.ggml.unknown_token_id", UnknownID)
	g.kvBool("tokenizer.ggml.add_bos_token", true)
	g.kvBool("tokenizer.ggml.add_eos_token", false)
	// llama.cpp's SentencePiece adds a leading ▁ unless told not to; Ollama's never does.
	g.kvBool("tokenizer.ggml.add_space_prefix", false)
}
