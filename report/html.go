package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/servebench/servebench/report/html/assets"
)

//go:embed report.html.tmpl
var htmlTemplate string

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"chartTable": chartTable, "thrStyle": thresholdStyle, "keepGroups": keepGroups, "headingLead": headingLead, "smallTable": smallTable}).Parse(htmlTemplate))

// htmlPage is what the template renders: a report or a comparison.
type htmlPage struct {
	Kicker    string
	Title     string
	Subtitle  string
	Simulated bool
	Banner    string
	// RunningHeader is printed at the top of every PDF page (see PDF).
	RunningHeader  string
	ModelTable     []Field
	HardwareTable  []Field
	Highlights     []Highlight
	Run            *RunMeta
	Sections       []Section
	EChartsVersion string
	// Data is marshalled to JSON by html/template inside the application/json script element,
	// which escapes <, > and & as \u003c etc., so no string can close the element.
	Data htmlData
	// ECharts is the embedded library, checked at init to contain no "</script".
	ECharts template.JS
}

type htmlData struct {
	Charts []*Chart `json:"charts"`
}

var echartsJS = func() template.JS {
	if strings.Contains(strings.ToLower(assets.EChartsJS), "</script") || strings.Contains(assets.EChartsJS, "<!--") {
		panic("report: the embedded echarts.min.js contains </script or <!-- and cannot be inlined")
	}
	return template.JS(assets.EChartsJS)
}()

// charts collects every chart of the sections, in order.
func charts(sections []Section) []*Chart {
	var out []*Chart
	for _, s := range sections {
		for _, b := range s.Blocks {
			if b.Kind == BlockChart && b.Chart != nil {
				out = append(out, b.Chart)
			}
		}
	}
	return out
}

// HTML writes the report as one self-contained HTML file: styles, data and the ECharts library
// are inlined, so it works offline and loads nothing from any host. Charts are interactive
// (hover values, legend toggles) and the page prints on A4.
func HTML(w io.Writer, r *Report) error {
	run := r.Run
	return renderPage(w, htmlPage{
		Kicker: "Benchmark report", Title: termText(r.Title, headingRunes), Subtitle: r.Subtitle, Simulated: r.Simulated, Banner: r.Banner,
		RunningHeader: termText(r.RunningHeader, headingRunes),
		ModelTable:    r.ModelTable, HardwareTable: r.HardwareTable, Highlights: r.Highlights, Run: &run, Sections: r.Sections,
	})
}

// CompareHTML writes a comparison of several runs as one self-contained HTML file.
func CompareHTML(w io.Writer, c *Comparison) error {
	head := c.Title + " · " + c.Subtitle
	if c.Banner != "" {
		head = "SIMULATED runs included · " + head
	}
	return renderPage(w, htmlPage{Kicker: "Benchmark comparison", Title: termText(c.Title, headingRunes), Subtitle: c.Subtitle,
		Simulated: c.Banner != "", Banner: c.Banner, Sections: c.Sections, RunningHeader: termText(head, headingRunes)})
}

func renderPage(w io.Writer, p htmlPage) error {
	p.EChartsVersion = assets.EChartsVersion()
	p.Data = htmlData{Charts: charts(p.Sections)}
	p.ECharts = echartsJS
	if err := pageTmpl.Execute(w, p); err != nil {
		return fmt.Errorf("rendering the HTML report: %w", err)
	}
	return nil
}

// thresholdStyle names how the i-th threshold line of a chart is drawn (the page's script uses
// the same order), so the caption tells the lines apart without colour.
func thresholdStyle(i int) string {
	return [...]string{"red dashes", "purple dots", "brown dash-dots"}[i%3]
}

// keepMaxRows is the most rows a table may have and still be kept on one page with the heading
// or verdict before it (a longer one breaks between rows instead of leaving a page's foot empty);
// such a small table is never split across pages either.
const keepMaxRows = 8

// keepLeadText is the most text blocks (the section's introduction) the heading keeps together
// with the first chart or table after them.
const keepLeadText = 2

// isText reports whether b is running text (the part of a section that introduces its content).
func isText(b Block) bool {
	return b.Kind == BlockParagraph || b.Kind == BlockNote || b.Kind == BlockMissing || b.Kind == BlockVerdict
}

// keepable reports whether b may be kept whole on one page with what introduces it: any block
// but a table of more than keepMaxRows rows.
func keepable(b Block) bool {
	return b.Kind != BlockTable || b.Table == nil || len(b.Table.Rows) <= keepMaxRows
}

// smallTable reports whether t is printed whole on one page (break-inside: avoid).
func smallTable(t *Table) bool { return t != nil && len(t.Rows) <= keepMaxRows }

// keepGroups splits a section's blocks into the runs printed without a page break inside. The
// first group goes with the section's heading: its introduction (up to keepLeadText text
// blocks) and the chart or table it introduces, so that no page ends with a heading and its
// introduction while the content they introduce starts the next page; where the introduction
// is longer, the heading keeps its first keepLeadText blocks; a long table is never in it
// (headingLead keeps the table's first rows with it instead). A verdict goes with the block after it, and
// every other block stands alone. It always returns at least one group (possibly empty), the
// heading's.
func keepGroups(blocks []Block) [][]Block {
	out := [][]Block{nil}
	n := 0
	for n < len(blocks) && n < keepLeadText && isText(blocks[n]) {
		n++
	}
	switch {
	case n < len(blocks) && !isText(blocks[n]) && keepable(blocks[n]):
		n++ // the introduction and the chart or table it introduces
	case n < len(blocks) && !isText(blocks[n]):
		// the introduction, then a long table (headingLead)
	case n == len(blocks):
		// a section of text only (headingLead)
	default:
		// a longer introduction: its first keepLeadText blocks, whose end is no worse a place
		// for a page to end than any other paragraph's
	}
	out[0] = blocks[:n]
	for i := n; i < len(blocks); i++ {
		g := blocks[i : i+1]
		if blocks[i].Kind == BlockVerdict && i+1 < len(blocks) && keepable(blocks[i+1]) {
			g = blocks[i : i+2]
			i++
		}
		out = append(out, g)
	}
	return out
}

// headingLead reports whether the heading's group (keepGroups) must not end a page: it holds no
// chart or table, and what follows it is a long table (whose first rows then stay with it) or,
// for a section of text only, the next section (whose heading and content then stay with it).
func headingLead(blocks []Block) bool {
	g := keepGroups(blocks)
	for _, b := range g[0] {
		if !isText(b) {
			return false
		}
	}
	n := len(g[0])
	return n == len(blocks) || !isText(blocks[n]) && !keepable(blocks[n])
}
