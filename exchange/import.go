package exchange

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// Format names a result format Import reads, as `servebench import --from` takes it.
type Format string

const (
	// FormatVLLM is the JSON `vllm bench serve --save-result` writes (one object per run; with
	// --append-result one per line), with or without --save-detailed's per-request arrays.
	FormatVLLM Format = "vllm"
	// FormatGuideLLM is GuideLLM's benchmarks.json (report schema v1 or v2): one benchmark per
	// load stage.
	FormatGuideLLM Format = "guidellm"
	// FormatAIPerf is AIPerf's (and GenAI-Perf's) profile_export_aiperf.json: one load point.
	FormatAIPerf Format = "aiperf"
)

// Formats lists the formats Import reads.
var Formats = []Format{FormatVLLM, FormatGuideLLM, FormatAIPerf}

// Tool is the name of the tool that writes the format.
func (f Format) Tool() string {
	switch f {
	case FormatVLLM:
		return "vllm bench serve"
	case FormatGuideLLM:
		return "GuideLLM"
	case FormatAIPerf:
		return "AIPerf"
	}
	return string(f)
}

// writer says how the tool is made to write the file Import reads.
func (f Format) writer() string {
	switch f {
	case FormatVLLM:
		return "vllm bench serve --save-result (add --save-detailed for per-request figures)"
	case FormatGuideLLM:
		return "guidellm benchmark run --outputs json (benchmarks.json)"
	case FormatAIPerf:
		return "aiperf profile (artifacts/RUN/profile_export_aiperf.json)"
	}
	return ""
}

// MaxImportBytes bounds the size of a file Import reads: a `vllm bench serve --save-detailed`
// file of 100,000 requests with their generated texts stays well below it.
const MaxImportBytes = 256 << 20

// ImportOptions says how to record an imported file.
type ImportOptions struct {
	// File is the file's name as the user gave it (its base name is kept in run.json).
	File string
	// Label is the run's label (metadata.label); empty: "TOOL import".
	Label string
	// Mode, when set, replaces the load mode of every imported cell, so it lines up with a
	// servebench run measured in that mode (compare sets cells side by side by scenario, mode,
	// context, output length and concurrency).
	Mode servebench.LoadMode
	// ContextTokens and OutputTokens, when positive, replace the cells' prompt and output
	// lengths (by default the mean tokens per successful request, rounded).
	ContextTokens, OutputTokens int
	// SimProfile, when set, says the file measured servebench's simulator with that profile:
	// the run is then marked SIMULATED like servebench's own simulated runs.
	SimProfile string
	// ToolVersion is servebench's version, written to run.json.
	ToolVersion string
	// Command is the command line that imported the file.
	Command []string
	// Now is the time of the import, used as the run's start when the file has none.
	Now time.Time
}

// Import reads one result file of format f and returns it as a servebench run: run.json with
// the source tool named (Manifest.Imported) and results.json with one cell per load point of
// the file, keyed like servebench's cells. A value the tool does not report is left out (nil,
// an empty summary, a withheld percentile) with the reason in the cell's Unavailable, never
// written as zero; docs/exchange.md maps every field and says where the tools' definitions
// differ from servebench's. Any problem with the file is returned, all at once, naming the
// field and what is wrong with it.
func Import(f Format, data []byte, opt ImportOptions) (servebench.Manifest, servebench.Results, error) {
	var m servebench.Manifest
	var res servebench.Results
	name := opt.File
	if name == "" {
		name = "the file"
	}
	if len(data) > MaxImportBytes {
		return m, res, fmt.Errorf("%s is %d MiB, above the %d MiB servebench import reads: it is not a %s result file (%s)",
			name, len(data)>>20, MaxImportBytes>>20, f.Tool(), f.writer())
	}
	vals, err := decodeValues(data)
	if err != nil {
		return m, res, fmt.Errorf("%s is not JSON (%v): servebench import reads the JSON file %s", name, err, f.writer())
	}
	d := &doc{format: f}
	var im imported
	switch f {
	case FormatVLLM:
		im = importVLLM(d, vals)
	case FormatGuideLLM:
		im = importGuideLLM(d, vals)
	case FormatAIPerf:
		im = importAIPerf(d, vals)
	default:
		return m, res, fmt.Errorf("--from %q is not a format servebench import reads; one of: vllm, guidellm, aiperf", f)
	}
	if len(d.errs) > 0 {
		hint := ""
		if g := guessFormat(vals); g != "" && g != f {
			hint = fmt.Sprintf(" It looks like a %s file: import it with --from %s.", g.Tool(), g)
		}
		return m, res, fmt.Errorf("%s cannot be imported as a %s result (%s):\n  - %s\n%s",
			name, f.Tool(), f.writer(), strings.Join(d.errs, "\n  - "), strings.TrimSpace(hint))
	}
	if len(im.cells) == 0 {
		return m, res, fmt.Errorf("%s holds no %s result with a request in it: nothing to import", name, f.Tool())
	}
	m, res = im.run(f, data, opt)
	return m, res, nil
}

// imported is what an importer read: the load points and what the file says of the run.
type imported struct {
	cells       []servebench.CellResult
	model       string
	target      string // the server the tool measured (a URL), "" when the file does not say
	toolVersion string
	// gpu is the hardware the file names ("NVIDIA H100", "8× NVIDIA H100"); "" when it names none.
	gpu        string
	api        servebench.API
	start, end time.Time
	notes      []string
}

// run builds the run folder's documents.
func (im imported) run(f Format, data []byte, opt ImportOptions) (servebench.Manifest, servebench.Results) {
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	start := im.start
	// the same file imported twice is the same run: its id comes from its bytes (and the start
	// the file gives), so a second import replaces the first in the index
	id := "imported-" + string(f) + "-" + hexSum[:12]
	if start.IsZero() {
		start = opt.Now
	} else {
		id = start.UTC().Format("20060102-150405") + "-" + string(f) + "-" + hexSum[:8]
	}
	end := im.end
	if end.Before(start) {
		end = start
		for _, c := range im.cells {
			if e := start.Add(time.Duration(c.WindowSeconds * float64(time.Second))); e.After(end) {
				end = e
			}
		}
	}
	start, end = start.UTC(), end.UTC()
	label := opt.Label
	if label == "" {
		label = f.Tool() + " import"
	}
	file := opt.File
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		file = file[i+1:]
	}
	api := im.api
	if api == "" {
		api = servebench.APIChat
	}
	plan := servebench.Plan{
		Target:   servebench.Target{URL: im.target, API: api, Model: im.model, SimProfile: opt.SimProfile},
		Metadata: servebench.Metadata{Label: label, GPU: im.gpu},
	}
	for i := range im.cells {
		c := &im.cells[i]
		if opt.Mode != "" {
			c.LoadMode = opt.Mode
		}
		if opt.ContextTokens > 0 {
			c.ContextTokens = opt.ContextTokens
		}
		if opt.OutputTokens > 0 {
			c.OutputTokens = opt.OutputTokens
		}
		if c.Unavailable == nil {
			c.Unavailable = map[string]string{}
		}
		c.Unavailable[servebench.UnavailableValidity] = "not judged: imported from " + f.Tool() + ", and servebench judges only a window it measured itself (its sample, stability and failure rules read its own records)"
	}
	plan.Sweep = sweepOf(im.cells)
	m := servebench.Manifest{SchemaVersion: servebench.SchemaVersion, ID: id, ToolVersion: opt.ToolVersion,
		Simulated: opt.SimProfile != "", Plan: plan, Command: opt.Command, StartedAt: start, FinishedAt: end, Status: "completed",
		Server: servebench.ServerInfo{Engine: engineOf(opt.SimProfile)},
		Imported: &servebench.ImportSource{Tool: f.Tool(), ToolVersion: im.toolVersion, Format: string(f), File: file, SHA256: hexSum,
			Target: redactURL(im.target)}}
	notes := append([]string{fmt.Sprintf("Imported from a %s result file (%s, SHA-256 %s…): its figures are %s's own, under its definitions (docs/exchange.md says where they differ from servebench's); servebench did not measure this run.",
		f.Tool(), file, hexSum[:12], f.Tool())}, im.notes...)
	res := servebench.Results{SchemaVersion: servebench.SchemaVersion,
		Run:   servebench.RunInfo{ID: id, Target: m.TargetName(), API: api, Model: im.model, Simulated: m.Simulated, StartedAt: start, FinishedAt: end},
		Cells: im.cells, Capacity: []servebench.CapacityResult{}, Notes: notes}
	stats.ScalingEfficiency(res.Cells)
	return m, res
}

// engineOf is the engine an imported run names: the simulator's for a file measured against it.
func engineOf(simProfile string) string {
	if simProfile != "" {
		return "sim"
	}
	return ""
}

// sweepOf describes the imported cells as a sweep plan: their contexts, concurrency levels,
// output length and load mode, so a report states the test parameters.
func sweepOf(cells []servebench.CellResult) servebench.Sweep {
	var sw servebench.Sweep
	seenC, seenN := map[int]bool{}, map[int]bool{}
	for _, c := range cells {
		if !seenC[c.ContextTokens] {
			seenC[c.ContextTokens] = true
			sw.Contexts = append(sw.Contexts, servebench.Tokens(c.ContextTokens))
		}
		if c.Concurrency > 0 && !seenN[c.Concurrency] {
			seenN[c.Concurrency] = true
			sw.Concurrency = append(sw.Concurrency, c.Concurrency)
		}
		sw.OutputTokens = servebench.Tokens(c.OutputTokens)
		sw.Mode = c.LoadMode
		sw.Requests = max(sw.Requests, c.RequestsTotal) // the prompts a fixed-count cell sent
		if c.RatePerSecond > 0 && !slices.Contains(sw.Rates, c.RatePerSecond) {
			sw.Rates = append(sw.Rates, c.RatePerSecond)
		}
	}
	sort.Slice(sw.Contexts, func(i, j int) bool { return sw.Contexts[i] < sw.Contexts[j] })
	sort.Ints(sw.Concurrency)
	return sw
}

// redactURL removes credentials written into a URL.
func redactURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.IndexByte(rest, '@'); at >= 0 && at < strings.IndexAny(rest+"/", "/?#") {
			return s[:i+3] + rest[at+1:]
		}
	}
	return s
}

// nonFinite is what a bare NaN, Infinity or -Infinity of the file (Python's json.dump writes
// them, e.g. for the mean of a metric without values) decodes to: a string value, so the
// field that held it can be named.
const nonFinite = "\x00non-finite:"

// decodeValues decodes the JSON values of data (one, or several on consecutive lines as
// `vllm bench serve --append-result` writes them), numbers kept as json.Number.
func decodeValues(data []byte) ([]any, error) {
	data = markNonFinite(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("it is empty")
	}
	return out, nil
}

// markNonFinite replaces the bare tokens NaN, Infinity and -Infinity outside strings by
// strings starting with nonFinite.
func markNonFinite(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	var out bytes.Buffer
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out.WriteByte(c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out.WriteByte(c)
			continue
		}
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(data[i:], []byte(tok)) {
				out.WriteString(`"\u0000non-finite:` + tok + `"`)
				i += len(tok) - 1
				c = 0
				break
			}
		}
		if c != 0 {
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// guessFormat says which tool's file vals look like; "" when none.
func guessFormat(vals []any) Format {
	if len(vals) == 0 {
		return ""
	}
	o, _ := vals[0].(map[string]any)
	switch {
	case o == nil:
		return ""
	case o["benchmarks"] != nil:
		return FormatGuideLLM
	case o["time_to_first_token"] != nil || o["request_throughput"] != nil && o["input_config"] != nil:
		return FormatAIPerf
	case o["completed"] != nil || o["mean_ttft_ms"] != nil:
		return FormatVLLM
	}
	return ""
}

// doc reads a decoded file, collecting every problem with a path naming the field.
type doc struct {
	format Format
	errs   []string
}

func (d *doc) fail(path, format string, a ...any) {
	if len(d.errs) < 20 {
		d.errs = append(d.errs, path+": "+fmt.Sprintf(format, a...))
	} else if len(d.errs) == 20 {
		d.errs = append(d.errs, "… (more problems not listed)")
	}
}

// obj returns v as an object; nil (and a problem, when need) when it is not one.
func (d *doc) obj(v any, path string, need bool) map[string]any {
	switch o := v.(type) {
	case map[string]any:
		return o
	case nil:
		if need {
			d.fail(path, "missing: %s writes it", d.format.Tool())
		}
		return nil
	}
	d.fail(path, "is %s, want an object", kindOf(v))
	return nil
}

// list returns v as an array; nil when absent.
func (d *doc) list(v any, path string) []any {
	switch l := v.(type) {
	case []any:
		return l
	case nil:
		return nil
	}
	d.fail(path, "is %s, want an array", kindOf(v))
	return nil
}

// str returns m[key] as a string; "" when absent or null.
func (d *doc) str(m map[string]any, key, path string) string {
	switch s := m[key].(type) {
	case string:
		if strings.HasPrefix(s, nonFinite) {
			d.fail(join(path, key), "is %s, want a string", strings.TrimPrefix(s, nonFinite))
			return ""
		}
		return s
	case nil:
		return ""
	case json.Number:
		return s.String()
	}
	d.fail(join(path, key), "is %s, want a string", kindOf(m[key]))
	return ""
}

// num returns m[key] as a finite number of at least 0; ok is false when it is absent or null
// (a problem when need) or not such a number (always a problem).
func (d *doc) num(m map[string]any, key, path string, need bool) (float64, bool) {
	if m == nil {
		return 0, false
	}
	return d.value(m[key], join(path, key), need)
}

func (d *doc) value(v any, path string, need bool) (float64, bool) {
	switch x := v.(type) {
	case nil:
		if need {
			d.fail(path, "missing: %s writes it", d.format.Tool())
		}
		return 0, false
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.fail(path, "%s is out of range for a number", x.String())
			return 0, false
		}
		if f < 0 {
			d.fail(path, "is negative (%s): a count, duration or rate cannot be below 0; the file is damaged or not %s's", x.String(), d.format.Tool())
			return 0, false
		}
		return f, true
	case string:
		if strings.HasPrefix(x, nonFinite) {
			d.fail(path, "is %s: %s wrote a non-finite value (a metric with no values); rerun the benchmark so requests succeed, or remove the field",
				strings.TrimPrefix(x, nonFinite), d.format.Tool())
			return 0, false
		}
	}
	d.fail(path, "is %s, want a number", kindOf(v))
	return 0, false
}

// count returns m[key] as a whole number of at least 0 (at most 1e12).
func (d *doc) count(m map[string]any, key, path string, need bool) (int, bool) {
	f, ok := d.num(m, key, path, need)
	if !ok {
		return 0, false
	}
	if f != math.Trunc(f) || f > 1e12 {
		d.fail(join(path, key), "is %v, want a whole number of at most 10^12", f)
		return 0, false
	}
	return int(f), true
}

// join is the path of key in the object at path ("" for the file's top level).
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// kindOf names the JSON kind of v for messages.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		if strings.HasPrefix(x, nonFinite) {
			return strings.TrimPrefix(x, nonFinite)
		}
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// statBlock is a tool's summary of one per-request value over the successful requests of a
// load point, in servebench's unit (seconds, tokens/s).
type statBlock struct {
	// N is how many values it summarises; 0 when the file does not say.
	N int
	// Mean, with ok; Std the standard deviation and whether it divides by n (population, as
	// numpy's default) or n − 1 (sample).
	Mean               float64
	HasMean            bool
	Std                float64
	HasStd             bool
	StdPopulation      bool
	Min, Max           *float64
	P50, P90, P95, P99 *float64
}

// summary turns a tool's block into a servebench Summary under name (the results.json field):
// the 95% interval of the mean from the standard deviation and N (Student's t, as
// stats.MeanCI95), the percentiles the tool gives unless N is below servebench's floor for
// them (stats.MinSamples: p99 needs 100 values), min and max where given. What is missing is
// said in unav, under "NAME.FIELD".
func (b statBlock) summary(name, tool string, unav map[string]string) servebench.Summary {
	if !b.HasMean {
		return servebench.Summary{}
	}
	s := servebench.Summary{Count: b.N, Mean: b.Mean}
	if s.Count == 0 {
		s.Count = 1 // the file gives a mean without saying of how many values
		unav[name+".count"] = tool + " does not say how many values this summarises"
	}
	if b.HasStd && b.N >= 2 {
		sd := b.Std
		if b.StdPopulation {
			sd *= math.Sqrt(float64(b.N) / float64(b.N-1))
		}
		h := stats.StudentT(0.5+stats.Confidence/2, b.N-1) * sd / math.Sqrt(float64(b.N))
		s.CI95 = &servebench.Interval{Low: b.Mean - h, High: b.Mean + h}
	} else {
		unav[name+".ci95"] = "no standard deviation and count in the file to compute it from"
	}
	if b.Min != nil && b.Max != nil {
		s.Min, s.Max = ptr(*b.Min), ptr(*b.Max)
	} else {
		unav[name+".min"] = tool + " does not report the minimum and maximum (left out)"
	}
	for _, p := range []struct {
		q    float64
		name string
		v    *float64
		dst  **float64
	}{{0.50, "p50", b.P50, &s.P50}, {0.90, "p90", b.P90, &s.P90}, {0.95, "p95", b.P95, &s.P95}, {0.99, "p99", b.P99, &s.P99}} {
		switch {
		case p.v == nil:
			unav[name+"."+p.name] = tool + " did not report it"
		case b.N > 0 && b.N < stats.MinSamples(p.q):
			unav[name+"."+p.name] = fmt.Sprintf("withheld: %s reported %.6g from %d values; servebench reports a %s only from %d", tool, *p.v, b.N, p.name, stats.MinSamples(p.q))
		default:
			v := *p.v
			*p.dst = &v
		}
	}
	return s
}

// loadPoint is what every importer reads of one load point besides the tool's per-request
// statistics: how the tool drove it, what it counted, and its rates over the benchmark.
type loadPoint struct {
	mode          servebench.LoadMode
	concurrency   int
	ratePerSecond float64
	// succeeded and failed count the load point's requests as the tool does.
	succeeded, failed int
	// inputTokensMean and outputTokensMean are per successful request; the cell is keyed by
	// them, rounded.
	inputTokensMean, outputTokensMean float64
	windowSeconds                     float64
	// outputTPS, totalTPS and requestRPS are the tool's rates; hasTotal is false when the file
	// has no total throughput (noTotal says so in the cell's Unavailable).
	outputTPS, totalTPS, requestRPS float64
	hasTotal                        bool
	noTotal                         string
	// noInterval says why the throughputs have no 95% interval (the tool measures one rate).
	noInterval string
}

// importedCell is the cell of one imported load point, as every importer builds it: keyed like
// a servebench sweep cell (its lengths the mean tokens per successful request, rounded), its
// counts, success rate, window and rates, and in unav (the cell's Unavailable, which it
// becomes) what no import has: throughput intervals, and answer tokens told apart from
// reasoning. The importer adds its tool's latency summaries.
func importedCell(tool string, p loadPoint, unav map[string]string) servebench.CellResult {
	var c servebench.CellResult
	c.CellKey = servebench.CellKey{Kind: servebench.KindSweep, Scenario: servebench.SweepScenario, LoadMode: p.mode,
		ContextTokens: roundTokens(p.inputTokensMean), OutputTokens: roundTokens(p.outputTokensMean),
		Concurrency: p.concurrency, RatePerSecond: p.ratePerSecond}
	c.RequestsTotal, c.RequestsSucceeded, c.RequestsFailed = p.succeeded+p.failed, p.succeeded, p.failed
	c.SuccessRate = float64(p.succeeded) / float64(p.succeeded+p.failed)
	c.InputTokensMean, c.OutputTokensMean = p.inputTokensMean, p.outputTokensMean
	c.WindowSeconds = p.windowSeconds
	c.SystemOutputThroughputTPS, c.RequestThroughputRPS = p.outputTPS, p.requestRPS
	if p.hasTotal {
		c.TotalThroughputTPS = p.totalTPS
	} else {
		unav["total_throughput_tps"] = p.noTotal
	}
	unav["system_output_throughput_tps_ci95"] = p.noInterval
	unav["total_throughput_tps_ci95"] = p.noInterval
	unav["first_content_seconds"] = tool + " does not tell reasoning from answer tokens"
	c.Unavailable = unav
	return c
}

// summaryOr is b.summary(name, …) when the tool reported the value, else an empty summary
// with missing as its reason in unav.
func (b statBlock) summaryOr(name, tool, missing string, unav map[string]string) servebench.Summary {
	if !b.HasMean {
		unav[name] = missing
		return servebench.Summary{}
	}
	return b.summary(name, tool, unav)
}

// ptr returns a pointer to v.
func ptr(v float64) *float64 { return &v }

// roundTokens is a mean token count as a cell's length key.
func roundTokens(v float64) int { return int(math.Round(v)) }
