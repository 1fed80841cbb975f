package report

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	servebench "github.com/servebench/servebench"
)

// renderHTML builds and renders the fixture (optionally altered) to HTML.
func renderHTML(t *testing.T, alter func(*Input)) string {
	t.Helper()
	in := loadFixture(t)
	if alter != nil {
		alter(&in)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, Build(in)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// dataBlock extracts the JSON data block of an HTML report.
var dataBlockRE = regexp.MustCompile(`(?s)<script type="application/json" id="servebench-data">(.*?)</script>`)

func TestHTMLSelfContained(t *testing.T) {
	page := renderHTML(t, nil)
	// No external resource of any kind: no src/href to a host, no @import, no url(http...).
	for _, bad := range []string{`src="http`, `href="http`, `src="//`, `href="//`, `@import`, `url(http`} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML references an external resource (%q)", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 3 {
		t.Errorf("want 3 inline script elements (data, echarts, init), got %d", n)
	}
	if strings.Contains(page, "<script src") {
		t.Error("a script is loaded by src")
	}
	m := dataBlockRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data block")
	}
	var data struct {
		Charts []Chart `json:"charts"`
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("data block is not JSON: %v", err)
	}
	if len(data.Charts) < 10 {
		t.Fatalf("want the fixture's charts in the data block, got %d", len(data.Charts))
	}
	dashed := 0
	for _, c := range data.Charts {
		if !strings.Contains(page, `id="`+c.ID+`"`) {
			t.Errorf("chart %s has no container", c.ID)
		}
		dashed += len(c.Thresholds)
	}
	if dashed == 0 {
		t.Error("no threshold lines in any chart")
	}
	if !strings.Contains(page, `type: "dashed"`) {
		t.Error("threshold lines are not drawn dashed")
	}
}

func TestHTMLEscapesUntrustedText(t *testing.T) {
	const evil = `<script>alert(1)</script>"'</script><!--`
	page := renderHTML(t, func(in *Input) {
		in.Manifest.Plan.Metadata.ModelName = evil
		in.Manifest.Plan.Metadata.Engine = evil
		in.Manifest.Server.Version = evil
		in.Results.Capacity[0].Title = evil
		in.Manifest.Plan.Scenarios[0].Title = evil // becomes a chart series name in the data block
	})
	if strings.Contains(page, "<script>alert(1)") {
		t.Fatal("an untrusted <script> tag appears unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the model name is not shown as escaped text")
	}
	// The data block must still be one element holding valid JSON with the text intact.
	m := dataBlockRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data block")
	}
	if strings.Contains(m[1], "<") {
		t.Error("a raw < inside the JSON data block")
	}
	var data struct {
		Charts []Chart `json:"charts"`
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("data block broken by untrusted text: %v", err)
	}
	found := false
	for _, c := range data.Charts {
		for _, s := range c.Series {
			found = found || s.Name == evil
		}
	}
	if !found {
		t.Error("the scenario title did not survive the JSON round trip")
	}
	// Only our three script elements exist.
	if n := strings.Count(strings.ToLower(page), "<script"); n != 3 {
		t.Errorf("want 3 script elements, got %d", n)
	}
}

func TestHTMLSimulatedBanner(t *testing.T) {
	page := renderHTML(t, func(in *Input) { in.Manifest.Simulated = true })
	if !strings.Contains(page, `class="banner"`) || !strings.Contains(page, "SIMULATED") {
		t.Fatal("simulated run without a SIMULATED banner")
	}
	if strings.Contains(renderHTML(t, nil), `class="banner"`) {
		t.Fatal("real run shows the SIMULATED banner")
	}
}

// TestWriteHTMLForInspection writes the fixture's report.html where SERVEBENCH_HTML points.
func TestWriteHTMLForInspection(t *testing.T) {
	path := os.Getenv("SERVEBENCH_HTML")
	if path == "" {
		t.Skip("set SERVEBENCH_HTML=/path/report.html to write the fixture's HTML report")
	}
	if err := os.WriteFile(path, []byte(renderHTML(t, nil)), 0o644); err != nil {
		t.Fatal(err)
	}
}

var _ = servebench.SchemaVersion

func TestMarkdownEscapesUntrustedText(t *testing.T) {
	const evil = `<script>alert(1)</script>"'<img src=x onerror=alert(2)>[link](javascript:alert(3))|`
	in := loadFixture(t)
	in.Manifest.Plan.Metadata.ModelName = evil
	in.Manifest.Plan.Metadata.Engine = evil
	in.Manifest.Server.Version = evil
	in.Results.Capacity[0].Title = evil
	in.Manifest.Plan.Scenarios[0].Title = evil
	var buf bytes.Buffer
	if err := Markdown(&buf, Build(in)); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, bad := range []string{"<script", "<img", "[link](javascript:"} {
		if strings.Contains(strings.ToLower(md), bad) {
			t.Errorf("untrusted text reaches the Markdown as markup: %q", bad)
		}
	}
	if n := strings.Count(md, "&lt;script>alert(1)&lt;/script>"); n < 3 {
		t.Errorf("the untrusted text is shown escaped %d times, want at least 3 (model, engine, use case)", n)
	}
}

// keepGroups: the heading keeps its introduction (up to keepLeadText text blocks) and the chart
// or short table after it, or, before a longer introduction, its first keepLeadText blocks; a
// verdict keeps the block after it; every other block stands alone; nothing is lost or
// repeated. headingLead marks the heading groups that hold no chart or table and come before a
// long table or the next section.
func TestKeepGroups(t *testing.T) {
	p := Block{Kind: BlockParagraph, Text: "p"}
	v := Block{Kind: BlockVerdict, Text: "v"}
	c := Block{Kind: BlockChart, Chart: &Chart{}}
	short := Block{Kind: BlockTable, Table: &Table{Rows: make([][]string, 3)}}
	long := Block{Kind: BlockTable, Table: &Table{Rows: make([][]string, keepMaxRows+1)}}
	tests := []struct {
		name   string
		blocks []Block
		want   []int // group sizes
		lead   bool
	}{
		{"empty section: the heading alone, kept with the next section", nil, []int{0}, true},
		{"a section of text only is kept with the next section", []Block{p, p}, []int{2}, true},
		{"a long table first: heading alone, kept with its first rows", []Block{long, p}, []int{0, 1, 1}, true},
		{"a short table first is kept", []Block{short, p}, []int{1, 1}, false},
		{"a chart first is kept", []Block{c, p}, []int{1, 1}, false},
		{"the introduction and the chart it introduces", []Block{p, c, p}, []int{2, 1}, false},
		{"two paragraphs and the chart", []Block{p, p, c}, []int{3}, false},
		{"the introduction and a short table", []Block{p, short, p}, []int{2, 1}, false},
		{"the introduction before a long table, kept with its first rows", []Block{p, v, long}, []int{2, 1}, true},
		{"a longer introduction: its first two blocks", []Block{p, p, p, c}, []int{2, 1, 1}, false},
		{"a verdict keeps the next block", []Block{p, p, p, v, p, p}, []int{2, 1, 2, 1}, false},
		{"a verdict before a long table stands alone", []Block{p, p, p, v, long}, []int{2, 1, 1, 1}, false},
		{"a verdict last stands alone", []Block{p, p, p, v}, []int{2, 1, 1}, false},
	}
	for _, tt := range tests {
		g := keepGroups(tt.blocks)
		var sizes []int
		n := 0
		for _, x := range g {
			sizes = append(sizes, len(x))
			n += len(x)
		}
		if !slices.Equal(sizes, tt.want) || n != len(tt.blocks) {
			t.Errorf("%s: groups %v, want %v", tt.name, sizes, tt.want)
		}
		if got := headingLead(tt.blocks); got != tt.lead {
			t.Errorf("%s: headingLead %v, want %v", tt.name, got, tt.lead)
		}
	}
}
