package report

import (
	"bytes"
	"strings"
	"testing"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/frontier"
)

func section(r *Report, id string) (int, *Section) {
	for i := range r.Sections {
		if r.Sections[i].ID == id {
			return i, &r.Sections[i]
		}
	}
	return -1, nil
}

// TestFrontierSection: the frontier stands beside Capacity Planning in the buyer's half, with
// its charts, the analysis in the JSON, and readings whose figures are package frontier's.
func TestFrontierSection(t *testing.T) {
	in := loadFixture(t)
	rep := Build(in)
	i, s := section(rep, "frontier")
	if s == nil {
		t.Fatal("no frontier section")
	}
	if j, _ := section(rep, "capacity-planning"); j != i-1 {
		t.Errorf("frontier section at %d, capacity planning at %d: want it right after", i, j)
	}
	if k, _ := section(rep, "technical-analysis"); k < i {
		t.Errorf("frontier section after the technical part (%d > %d)", i, k)
	}
	if rep.Frontier == nil || len(rep.Frontier.Curves) == 0 {
		t.Fatal("report.Frontier is empty")
	}
	var charts []string
	var text strings.Builder
	for _, b := range s.Blocks {
		if b.Chart != nil {
			charts = append(charts, b.Chart.ID)
			if !b.Chart.Connect {
				t.Errorf("chart %s does not connect its series across the union of x values", b.Chart.ID)
			}
		}
		text.WriteString(b.Text)
		if b.Table != nil {
			for _, r := range b.Table.Rows {
				text.WriteString(strings.Join(r, " | ") + "\n")
			}
		}
	}
	if strings.Join(charts, ",") != "chart-frontier,chart-frontier-cost" {
		t.Errorf("charts = %v", charts)
	}
	// the fixture declares "1x H200 SXM" and $3.50 per GPU-hour: the declared price stands, the
	// H200's all-in kW comes from the defaults table, and the text says which is which
	h := rep.Frontier.Hardware
	if p, ok := h.Primary(); !ok || p.USDPerGPUHour != 3.50 || p.Source != frontier.Declared || h.AllInKWPerGPU != 1.37 || h.KWSource != frontier.Defaulted {
		t.Fatalf("hardware = %+v", h)
	}
	for _, want := range []string{"$3.50 per GPU-hour (declared", "1.37 kW all-in per GPU (default)", frontier.DefaultsSource} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the section does not say %q", want)
		}
	}
	// every reading row's throughput per GPU and cost are the package's, "~" when interpolated
	w := rep.Frontier.Curves[0]
	for _, target := range frontier.DefaultSpeedFloors() {
		r := w.At(target, h)
		if r.Kind == frontier.ReadOutOfRange {
			continue
		}
		c, _ := primaryCost(r.Economics)
		want := fmtNum(target, 0) + " | " + readingPerGPU(r) + " | " + readingLabel(w.Curve, r) + " | " + approx(r, fmtUSD(c.USDPerMillionOutputTokens))
		if !strings.Contains(text.String(), want) {
			t.Errorf("no reading row %q", want)
		}
	}
}

// TestFrontierSectionWithoutLevels: a run with no closed-loop level says what would fill the
// section and has no frontier in its JSON.
func TestFrontierSectionWithoutLevels(t *testing.T) {
	in := loadFixture(t)
	in.Results.Cells = []servebench.CellResult{}
	in.Results.Capacity = nil
	rep := Build(in)
	_, s := section(rep, "frontier")
	if s == nil || len(s.Blocks) != 1 || s.Blocks[0].Kind != BlockMissing || !strings.Contains(s.Blocks[0].Text, "--concurrency") {
		t.Fatalf("section = %+v", s)
	}
	if rep.Frontier != nil {
		t.Error("a frontier without levels")
	}
}

// TestFrontierCSV: one row per measured level, the workload and the GPUs' source first, every
// figure of the point a column, a cost beside its tier.
func TestFrontierCSV(t *testing.T) {
	rep := Build(loadFixture(t))
	var b strings.Builder
	if err := FrontierCSV(&b, rep.Frontier); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	n := 0
	for _, w := range rep.Frontier.Curves {
		n += len(w.Points)
	}
	if len(lines) != n+1 {
		t.Fatalf("%d lines, want a header and %d rows", len(lines), n)
	}
	head := strings.Split(lines[0], ",")
	if strings.Join(head[:6], ",") != "context_tokens,output_tokens,concurrency,cell_id,gpus,gpus_source" {
		t.Errorf("header starts %v", head[:6])
	}
	for _, col := range []string{"per_user_tps", "output_tps_per_gpu", "pareto", "economics.costs.0.tier", "economics.costs.0.source", "economics.costs.0.usd_per_million_output_tokens", "economics.costs.0.output_tokens_per_usd", "economics.output_tps_per_mw"} {
		if !strings.Contains(lines[0], ","+col+",") && !strings.HasSuffix(lines[0], ","+col) {
			t.Errorf("no column %s in %s", col, lines[0])
		}
	}
	if !strings.Contains(lines[1], ",declared,") {
		t.Errorf("the first row does not say the GPU count and price were declared: %s", lines[1])
	}
	var empty strings.Builder
	if err := FrontierCSV(&empty, nil); err != nil || strings.Count(empty.String(), "\n") != 1 {
		t.Errorf("no analysis: %q, %v (want the header alone)", empty.String(), err)
	}
}

// TestFrontierUsersAreCapacityPlanningUsers: one definition of a user. A frontier reading that
// stands for a use case's capacity limit (L requests in flight) sizes every target user count
// to exactly the replicas and GPUs Capacity Planning gives for that use case (L × users per
// slot users per replica), at the default users per slot and at a declared one; before, the
// frontier counted each request in flight as one user and asked for 4× the replicas.
func TestFrontierUsersAreCapacityPlanningUsers(t *testing.T) {
	for _, perSlot := range []float64{0, 2.5} {
		in := loadFixture(t)
		in.Manifest.Plan.Sizing.UsersPerSlot = perSlot
		r := Build(in)
		if r.Frontier == nil {
			t.Fatal("the fixture has no frontier")
		}
		want := perSlot
		if want == 0 {
			want = capacity.DefaultUsersPerSlot
		}
		if r.Frontier.UsersPerSlot != want {
			t.Fatalf("frontier users per slot %v, want %v", r.Frontier.UsersPerSlot, want)
		}
		sz := capacity.Size(in.Results.Capacity, capacity.SizingInput{Plan: in.Manifest.Plan.Sizing, DeclaredGPU: in.Manifest.Plan.Metadata.GPU, Cells: in.Results.Cells})
		checked := 0
		for _, uc := range sz.UseCases {
			if uc.SlotsPerReplica == nil || uc.Approximate || uc.AtMost {
				continue
			}
			reading := frontier.Reading{Kind: frontier.ReadMeasured, Level: float64(*uc.SlotsPerReplica)}
			for _, tg := range uc.Targets {
				f, ok := reading.Fleet(tg.Users, r.Frontier.Hardware, "", r.Frontier.UsersPerSlot)
				if !ok || f.Replicas != tg.Replicas || f.UsersPerReplica != *uc.UsersPerReplica {
					t.Errorf("users per slot %v, %s at %d requests, %d users: the frontier gives %d replicas (%v users each), Capacity Planning %d (%v)",
						want, uc.UseCase, *uc.SlotsPerReplica, tg.Users, f.Replicas, f.UsersPerReplica, tg.Replicas, *uc.UsersPerReplica)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Fatal("no measured capacity limit in the fixture to check against")
		}
		var md bytes.Buffer
		if err := Markdown(&md, r); err != nil {
			t.Fatal(err)
		}
		if def := frontier.UsersDefinition("", want); !strings.Contains(md.String(), def) {
			t.Errorf("the frontier's fleet does not say what a user is (%q)", def)
		}
	}
}
