// Package report turns one run (run.json, results.json, telemetry.jsonl) into one computed
// Report value and renders it as Markdown, self-contained HTML, PDF, a terminal summary and
// JSON.
//
// Compute once, render many: Build derives every number, every sentence and every chart
// series; the renderers (Markdown, HTML, Terminal, JSON) only lay the value out. A renderer
// never computes a statistic, so the formats cannot disagree.
//
//	rep := report.Build(report.Input{Manifest: man, Results: res, Samples: samples})
//	report.Markdown(os.Stdout, rep)
//	report.HTML(f, rep)                     // offline: ECharts and data inlined
//	pdf.Print(ctx, "report.html", "report.pdf") // package report/pdf: headless Chromium
//
// Every sentence of narrative is generated from the data. A section whose data is missing says
// what would fill it (for example "pass --metrics-url").
package report

import (
	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/frontier"
)

// Input is one run as read from its run folder.
type Input struct {
	Manifest servebench.Manifest
	Results  servebench.Results
	// Samples is telemetry.jsonl; nil when no telemetry was recorded.
	Samples []servebench.Sample
}

// Report is the whole computed report of one run. Every string is final text (numbers already
// formatted with their units); every chart carries its series.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	Title         string `json:"title"`
	Subtitle      string `json:"subtitle"`
	Simulated     bool   `json:"simulated"`
	// RunningHeader is the line printed at the top of every PDF page: model, hardware, engine,
	// and SIMULATED first when true.
	RunningHeader string `json:"running_header"`
	// Banner is the SIMULATED warning, empty for a real target.
	Banner string  `json:"banner,omitempty"`
	Run    RunMeta `json:"run"`
	// ModelTable and HardwareTable are the declared metadata and what the server said.
	ModelTable    []Field     `json:"model_table"`
	HardwareTable []Field     `json:"hardware_table"`
	Highlights    []Highlight `json:"highlights"`
	// Summary is the compact context × concurrency table of the terminal summary.
	Summary Table `json:"summary"`
	// Capacity holds one verdict per use case (also rendered inside Sections).
	Capacity []CapacityVerdict `json:"capacity"`
	// Planning is the Capacity Planning table (replicas, GPUs, cost per target user count), also
	// rendered inside Sections; nil without sizing.
	Planning *Table `json:"planning,omitempty"`
	// PlanningSummary is the same in short lines for the terminal: the assumptions, then one
	// line per use case.
	PlanningSummary []string `json:"planning_summary,omitempty"`
	// Frontier is the buyer's frontier (throughput per GPU against speed per user, money and
	// power, first-token limits, SLO tiers), also rendered inside Sections; nil without a
	// closed-loop level.
	Frontier *frontier.Analysis `json:"frontier,omitempty"`
	// Reproduce is the command that made the run, with where its resolved plan is kept.
	Reproduce string `json:"reproduce,omitempty"`
	// Sections in reading order; Level 1 is a chapter, 2 a subsection.
	Sections []Section `json:"sections"`
}

// RunMeta identifies the run.
type RunMeta struct {
	ID          string `json:"id"`
	Target      string `json:"target"`
	API         string `json:"api"`
	Model       string `json:"model"`
	Status      string `json:"status"`
	ToolVersion string `json:"tool_version"`
	StartedAt   string `json:"started_at"`
	FinishedAt  string `json:"finished_at"`
	Duration    string `json:"duration"`
}

// Field is one label/value pair.
type Field struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Highlight is one headline figure: Value in large type, Label under it, Condition under that.
type Highlight struct {
	Value     string `json:"value"`
	Label     string `json:"label"`
	Condition string `json:"condition"`
}

// CapacityVerdict is one use case's capacity, ready to print.
type CapacityVerdict struct {
	UseCase       string `json:"use_case"`
	Title         string `json:"title"`
	ContextTokens int    `json:"context_tokens"`
	Context       string `json:"context"`
	// LimitLabel is "24", "~35", "125+" or "not viable".
	LimitLabel string `json:"limit_label"`
	// LimitPhrase is the label as a phrase: "24 concurrent requests", "1 request", "not viable".
	LimitPhrase string `json:"limit_phrase"`
	LimitKind   string `json:"limit_kind"`
	// LimitRange is the capacity result's limit_range: the levels its data cannot tell apart
	// from the limit at 95% (nil for a lower bound or a use case not viable).
	LimitRange *[2]int `json:"limit_range,omitempty"`
	// Analysis is the one-line guidance ("Supports 24 concurrent requests within accepted
	// thresholds."); Sentence is the longer verdict with the values at the limit.
	Analysis string `json:"analysis"`
	Sentence string `json:"sentence"`
	// Interrupted is set when the search stopped before its verdict: LimitLabel ("≥8") is the
	// limit so far.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Section is one chapter or subsection of the report. Level 0 is a part heading ("Technical
// Analysis") that separates the buyer's chapters from the engineer's; it has no blocks of its
// own beyond an introduction.
type Section struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Level  int     `json:"level"`
	Blocks []Block `json:"blocks"`
}

// BlockKind says how a Block is rendered.
type BlockKind string

const (
	// BlockParagraph is narrative text.
	BlockParagraph BlockKind = "paragraph"
	// BlockNote is a highlighted remark (interpretation, caching note).
	BlockNote BlockKind = "note"
	// BlockMissing says what data is missing and how to obtain it.
	BlockMissing BlockKind = "missing"
	// BlockVerdict is a capacity verdict headline.
	BlockVerdict BlockKind = "verdict"
	// BlockTable is a table.
	BlockTable BlockKind = "table"
	// BlockChart is a chart (a table in Markdown).
	BlockChart BlockKind = "chart"
)

// Block is one element of a section: exactly one of Text, Table, Chart is set.
type Block struct {
	Kind  BlockKind `json:"kind"`
	Text  string    `json:"text,omitempty"`
	Table *Table    `json:"table,omitempty"`
	Chart *Chart    `json:"chart,omitempty"`
}

// Table is a formatted table.
type Table struct {
	Caption string     `json:"caption,omitempty"`
	Header  []string   `json:"header"`
	Rows    [][]string `json:"rows"`
}

// Chart is a line chart over categories (contexts or concurrency levels).
type Chart struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Caption string `json:"caption"`
	// XName labels the x axis; X holds its category labels ("1K", "8K" or "1", "2", "4").
	XName string   `json:"x_name"`
	X     []string `json:"x"`
	// XValues are the numeric positions of X (tokens, requests) so the axis is drawn to scale:
	// XScale "log" (context lengths, base 2) or "linear" (concurrency). Empty: evenly spaced
	// categories.
	XValues []float64 `json:"x_values,omitempty"`
	XScale  string    `json:"x_scale,omitempty"`
	// YName labels the left axis, Y2Name the right axis (empty: no right axis).
	YName  string `json:"y_name"`
	Y2Name string `json:"y2_name,omitempty"`
	// Decimals is how many decimals tables show for this chart's values.
	Decimals int `json:"decimals"`
	// Decimals2 is the same for series on the right axis.
	Decimals2 int      `json:"decimals2,omitempty"`
	Series    []Series `json:"series"`
	// Thresholds are drawn as horizontal lines, each in its own labelled style.
	Thresholds []Threshold `json:"thresholds,omitempty"`
	// Markers are vertical lines at an x value with a label (e.g. the capacity limit).
	Markers []Marker `json:"markers,omitempty"`
	// Connect draws each series through the x values it has no point at: set when X is the
	// union of several series' own x values (an x–y chart such as the frontier).
	Connect bool `json:"connect,omitempty"`
	// MarkNote explains how the chart draws points from cells that are not valid (Series.Marks),
	// printed with its caption; empty when every point is valid.
	MarkNote string `json:"mark_note,omitempty"`
}

// Marker is a labelled vertical line at X (an x value on a numeric axis).
type Marker struct {
	Name string  `json:"name"`
	X    float64 `json:"x"`
}

// Series is one line; Data[i] belongs to X[i], nil where not measured.
type Series struct {
	Name string     `json:"name"`
	Axis int        `json:"axis"`
	Data []*float64 `json:"data"`
	// Style: "" solid, "band" for min/max bands, "points" for points without a line, "dashed".
	Style string `json:"style,omitempty"`
	// Marks[i] is the validity verdict of the cell behind Data[i] when it is not valid
	// ("low-confidence" or "invalid"), "" otherwise; nil when every point is valid.
	Marks []string `json:"marks,omitempty"`
	// Tips[i] follows Data[i]'s value in the chart's tooltip: its 95% interval and the cell's
	// validity (pointTip); absent for series not drawn from cells.
	Tips []string `json:"tips,omitempty"`
}

// Threshold is a dashed horizontal line at Value on axis Axis.
type Threshold struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Axis  int     `json:"axis"`
}
