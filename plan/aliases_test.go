package plan

import (
	"runtime"
	"strings"
	"testing"
)

// bomb is 371 bytes of YAML whose aliases, nested nine deep, expand to 9^9 (387 million)
// strings under request.extra_body: gigabytes once decoded or sent.
const bomb = `# a bomb
request:
  extra_body:
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
`

// An alias bomb is refused before anything is expanded, with an error that says what and how
// to fix it; the refusal costs about the file's own size, not its expansion.
func TestAliasBombIsRefused(t *testing.T) {
	if len(bomb) != 371 {
		t.Fatalf("the bomb is %d bytes, want the report's 371", len(bomb))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseFile([]byte(bomb))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "aliases expand it to more than 100000 values") || !strings.Contains(err.Error(), "nest fewer aliases") {
		t.Fatalf("error %v, want the alias bomb refused", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("refusing the bomb allocated %d MiB", alloc>>20)
	}
}

// Anchors and aliases that a plan really uses (thresholds shared by use cases) still decode, and
// the count is of the expanded document, so a wide plan under the limit passes.
func TestPlanAliasesWithinTheLimitDecode(t *testing.T) {
	f, err := ParseFile([]byte(`use_cases:
  - name: chat
    context: 1k
    thresholds: &fast {ttft_seconds_max: 1, generation_speed_tps_min: 20}
  - name: rag
    context: 8k
    thresholds: *fast
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(f, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.UseCases) != 2 || p.UseCases[1].Thresholds.TTFTSecondsMax == nil || *p.UseCases[1].Thresholds.TTFTSecondsMax != 1 {
		t.Fatalf("use cases %+v", p.UseCases)
	}
	// the count: 3 levels of 9 aliases of a 9-string list is 9^4 strings, well under the limit;
	// one more level (9^5 = 59049 strings, 66430 values) too; two more are refused
	levels := func(n int) string {
		s := "request:\n  extra_body:\n    a0: &a0 [x,x,x,x,x,x,x,x,x]\n"
		for i := 1; i <= n; i++ {
			p := "*a" + string(rune('0'+i-1))
			s += "    a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat(p+",", 8) + p + "]\n"
		}
		return s
	}
	for n, refused := range map[int]bool{3: false, 4: false, 5: true} {
		_, err := ParseFile([]byte(levels(n)))
		if (err != nil) != refused {
			t.Errorf("%d levels: error %v, want refused %v", n, err, refused)
		}
	}
}
