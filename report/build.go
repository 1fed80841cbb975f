package report

import (
	"fmt"
	"sort"
	"strings"

	servebench "github.com/servebench/servebench"
)

// builder carries the run through the section builders.
type builder struct {
	in    Input
	man   *servebench.Manifest
	res   *servebench.Results
	md    servebench.Metadata
	sweep grid
	rep   *Report
}

// Build computes the whole report of one run. It never fails: a section without data says
// what would have filled it. Each section's builder lives in a file named for it (title.go,
// summary.go, executive.go, usecases.go, throughput.go, speed.go, ttft.go, capacity.go, ...).
func Build(in Input) *Report {
	in = displayInput(in)
	b := &builder{in: in, man: &in.Manifest, res: &in.Results, md: in.Manifest.Plan.Metadata}
	b.sweep = newGrid(in.Results.Cells, func(c *servebench.CellResult) bool { return c.OnSweepGrid() })
	if b.sweep.empty() {
		// A run without sweep cells (capacity only): show the capacity searches' levels (in
		// requests and in users).
		b.sweep = newGrid(in.Results.Cells, func(c *servebench.CellResult) bool {
			return c.Kind == servebench.KindCapacity || c.Kind == servebench.KindUsers
		})
	}
	b.rep = &Report{SchemaVersion: servebench.SchemaVersion, Simulated: IsSimulated(in.Manifest, in.Results)}
	b.title()
	b.reproduce()
	b.rep.Capacity = b.verdicts()
	b.highlights()
	b.summaryTable()

	b.sectionExecutive()
	b.sectionUseCases()
	b.sectionCapacityPlanning()
	b.sectionFrontier()
	b.add("technical-analysis", "Technical Analysis", 0,
		para("The chapters above answer what to buy; the chapters below show how the system behaves and why, for the engineer who tunes or verifies it: throughput, latency, queueing, prefill, inter-token timing, scaling, power, the capacity searches in detail, and every measured cell."))
	b.sectionThroughput()
	b.sectionSpeed()
	b.sectionTTFT()
	b.sectionCapacity()
	b.sectionUsers()
	b.sectionQueue()
	b.sectionWorkloads()
	b.sectionPromptCaching()
	b.sectionPrefill()
	b.sectionITL()
	b.sectionScaling()
	b.sectionPower()
	b.sectionDedicated()
	b.sectionServeTable()
	b.sectionPercentiles()
	b.sectionTelemetry()
	b.sectionNotes()
	b.sectionMethodology()
	return b.rep
}

// IsSimulated reports whether a run measured servebench's simulated engine: the built-in one,
// or a `servebench sim` server reached by URL (the engine identifies itself on the wire),
// whatever the plan declares about the hardware.
func IsSimulated(man servebench.Manifest, res servebench.Results) bool {
	return man.Simulated || res.Run.Simulated || man.Server.Engine == "sim"
}

func (b *builder) add(id, title string, level int, blocks ...Block) {
	b.rep.Sections = append(b.rep.Sections, Section{ID: id, Title: title, Level: level, Blocks: blocks})
}

func para(format string, a ...any) Block {
	return Block{Kind: BlockParagraph, Text: fmt.Sprintf(format, a...)}
}
func note(text string) Block    { return Block{Kind: BlockNote, Text: text} }
func missing(text string) Block { return Block{Kind: BlockMissing, Text: text} }
func tableB(t *Table) Block     { return Block{Kind: BlockTable, Table: t} }

// chartB is a chart block; its MarkNote is filled from its series' marks.
func chartB(c *Chart) Block {
	c.MarkNote = markNote(c)
	return Block{Kind: BlockChart, Chart: c}
}
func verdictB(text string) Block { return Block{Kind: BlockVerdict, Text: text} }

// modelName is the best display name of the model.
func (b *builder) modelName() string {
	switch {
	case b.md.ModelName != "":
		return b.md.ModelName
	case b.man.Plan.Target.Model != "":
		return b.man.Plan.Target.Model
	case b.res.Run.Model != "":
		return b.res.Run.Model
	}
	return "unnamed model"
}

func (b *builder) engineName() string { return b.man.EngineName() }

// noSweep adds the section id with why it has nothing to chart when the run has no sweep grid
// (sessions, open-loop or dataset cells only, or no cell completed), and reports whether it did.
func (b *builder) noSweep(id, title string) bool {
	if b.sweep.empty() && b.man.Plan.Sessions != nil {
		b.add(id, title, 1, missing("This run measured multi-turn sessions instead of the context × concurrency grid: see Prompt Caching and the Serving Benchmark Summary."))
		return true
	}
	if b.sweep.empty() && len(b.workloadCells()) > 0 {
		b.add(id, title, 1, missing("This run measured request rates or replayed a dataset, not a grid of context lengths × concurrency levels, so this view has nothing to chart: the Request-Rate Sweep or Dataset Replay section and the summary tables show every measured cell."))
		return true
	}
	if b.sweep.empty() {
		b.add(id, title, 1, missing("No sweep cell completed a request, so there is nothing to chart. Check the notes below for failures, then rerun (servebench run --resume RUN_DIR completes missing cells)."))
		return true
	}
	return false
}

// unavailable returns the distinct reasons the cells give for field being null.
func (b *builder) unavailable(field string) string {
	seen := map[string]bool{}
	var rs []string
	for _, c := range b.res.Cells {
		if r, ok := c.Unavailable[field]; ok && !seen[r] {
			seen[r] = true
			rs = append(rs, r)
		}
	}
	sort.Strings(rs)
	return strings.Join(rs, "; ")
}
