package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/exchange"
)

// importedInput imports a vllm bench serve result file without --save-detailed (no generation
// speed, no min or max, no e2e latency) as servebench import does.
func importedInput(t *testing.T) Input {
	t.Helper()
	data, err := os.ReadFile("../exchange/testdata/import/vllm_docs_sharegpt.json")
	if err != nil {
		t.Fatal(err)
	}
	m, res, err := exchange.Import(exchange.FormatVLLM, data, exchange.ImportOptions{File: "vllm_docs_sharegpt.json",
		ToolVersion: "test", Command: []string{"servebench", "import", "--from", "vllm", "vllm_docs_sharegpt.json"}, Now: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return Input{Manifest: m, Results: res}
}

// The report of an imported run states the import (tool, file, the tool's definitions), leaves
// out servebench's own claims about how it measures, shows what the tool did not report as
// unknown rather than 0, and says the cells are not judged.
func TestImportedRunReportStatesTheImport(t *testing.T) {
	in := importedInput(t)
	r := Build(in)
	var md, term bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "terminal": term.String()} {
		for _, bad := range []string{
			"marker unique",                    // servebench's fresh prompts
			"cannot force the length",          // servebench's output-length request
			"0.0 tok/s",                        // the speed the tool did not report
			"Every per-request record is kept", // servebench's requests.jsonl
		} {
			if strings.Contains(out, bad) {
				t.Errorf("%s report of an imported run says %q", name, bad)
			}
		}
	}
	for _, want := range []string{
		"Imported, not measured by servebench",          // the executive summary says so
		"vllm\\_docs\\_sharegpt.json",                   // the file
		"vllm's TPOT",                                   // the tool's definitions in the methodology
		"| 382.9 | 619.9 | — | 71.5 / n&lt;min |",       // the serving table: speed unknown, not 0
		"validity is unavailable in 1 cell: not judged", // the notes explain it
		"ttft\\_seconds.min is unavailable in 1 cell",   // min and max not reported
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown report of an imported run lacks %q", want)
		}
	}
	if !strings.Contains(term.String(), "—           382.9 tok/s   100.0%   imported (not judged)") {
		t.Errorf("terminal summary lacks the imported validity:\n%s", term.String())
	}
	c := in.Results.Cells[0]
	if c.TTFTSeconds.Min != nil || c.TTFTSeconds.Max != nil {
		t.Errorf("a minimum and maximum the file does not have were recorded: %v %v", c.TTFTSeconds.Min, c.TTFTSeconds.Max)
	}
}

// compare sets an imported run beside a servebench run: what the tool did not report reads
// "—", not 0, and its validity "imported (not judged)".
func TestCompareImportedRunShowsUnknownNotZero(t *testing.T) {
	in := importedInput(t)
	own := in
	own.Manifest.Imported = nil
	own.Manifest.ID, own.Manifest.Plan.Metadata.Label = "own", "own"
	own.Results.Cells = []servebench.CellResult{in.Results.Cells[0]}
	own.Results.Cells[0].Unavailable = nil
	own.Results.Cells[0].GenerationSpeedTPS = servebench.Summary{Count: 10, Mean: 50}
	own.Results.Cells[0].Validity = servebench.Validity{Verdict: servebench.VerdictValid}
	var md bytes.Buffer
	if err := CompareMarkdown(&md, Compare([]Input{in, own})); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"| Per-user generation (tok/s) | — | 50.0 |", "| Validity | imported (not judged) | valid |", "| End-to-end latency | — / — |"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| Per-user generation (tok/s) | 0.0") {
		t.Error("compare shows the speed the tool did not report as 0.0")
	}
	// the Definitions section gives the imported column its tool's definitions, named as such,
	// beside servebench's for the run it measured
	for _, want := range []string{
		"Not every column was measured by servebench: vllm bench serve import was imported from vllm bench serve. An imported run's figures are its tool's own, under that tool's definitions",
		"servebench's definitions: own",
		"vllm bench serve's definitions: vllm bench serve import (imported)",
		"| itl\\_seconds | vllm's TPOT: (latency − TTFT) / (output tokens − 1), per request. |",
		"a chat role-only chunk counts",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare's definitions lack %q:\n%s", want, out[strings.Index(out, "Definitions"):])
		}
	}
	// two servebench runs: servebench's definitions alone, as before
	md.Reset()
	if err := CompareMarkdown(&md, Compare([]Input{own, own})); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "imported") || strings.Contains(md.String(), "'s definitions:") {
		t.Errorf("a comparison of measured runs speaks of imports:\n%s", md.String())
	}
}

// An imported run's title and hardware say what its file declares (the tool, its version, the
// model) and plainly what it does not, never "undeclared hardware (set metadata.gpu in the
// plan)", which points at a plan the import never had.
func TestImportedRunTitleSaysWhatTheFileDeclares(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*Input)
		title  string
		sub    string
		absent string
	}{
		// the sample names its model, not its hardware, engine or server address
		{"vllm sample", func(*Input) {}, "NousResearch/Hermes-3-Llama-3.1-8B",
			"Imported from vllm bench serve's result file (tool version not in the file); hardware, serving engine and server address not declared in the file", ""},
		// a file that names the tool's version and the server: only what is missing is listed
		{"version and target", func(in *Input) {
			in.Manifest.Imported.ToolVersion, in.Manifest.Imported.Target = "0.11.0", "http://gpu-box:8000"
		}, "NousResearch/Hermes-3-Llama-3.1-8B",
			"Imported from vllm bench serve 0.11.0's result file; hardware and serving engine not declared in the file", "tool version not in the file"},
		// hardware the file names (AIPerf's GPU telemetry) is said, and no longer listed unknown
		{"hardware named", func(in *Input) {
			in.Manifest.Imported.Target, in.Manifest.Plan.Metadata.GPU = "http://gpu-box:8000", "2× NVIDIA H100"
		}, "NousResearch/Hermes-3-Llama-3.1-8B",
			"Imported from vllm bench serve's result file (tool version not in the file), on 2× NVIDIA H100; serving engine not declared in the file", "hardware"},
		// no model in the file: the title says so
		{"no model", func(in *Input) {
			in.Manifest.Plan.Target.Model, in.Results.Run.Model = "", ""
		}, "Model not named in the vllm bench serve result file",
			"model, hardware, serving engine and server address not declared in the file", ""},
	} {
		in := importedInput(t)
		tc.edit(&in)
		r := Build(in)
		if r.Title != tc.title {
			t.Errorf("%s: title %q, want %q", tc.name, r.Title, tc.title)
		}
		if !strings.Contains(r.Subtitle, tc.sub) || strings.Contains(r.Subtitle, "undeclared") || (tc.absent != "" && strings.Contains(r.Subtitle, tc.absent)) {
			t.Errorf("%s: subtitle %q, want it to say %q", tc.name, r.Subtitle, tc.sub)
		}
		for _, f := range r.HardwareTable {
			if f.Label == "GPU" && f.Value != "not declared in the vllm bench serve result file" && f.Value != in.Manifest.Plan.Metadata.GPU {
				t.Errorf("%s: GPU %q", tc.name, f.Value)
			}
		}
	}
}
