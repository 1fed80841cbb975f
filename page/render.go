package page

import (
	"bytes"
	"context"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/html/assets"
	"github.com/servebench/servebench/store"
)

//go:embed templates/pages.html.tmpl
var pagesTemplate string

//go:embed assets/app.js assets/style.css assets/wasm_exec.js assets/servebench.wasm
var assetFS embed.FS

var tmpl = template.Must(template.New("pages").Funcs(template.FuncMap{
	"utc":           func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
	"pct":           func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"plusMinus":     report.PlusMinusOrWithheld,
	"seconds":       seconds,
	"limitLabel":    capacity.LimitLabel,
	"verdict":       capacity.Verdict,
	"kindWords":     capacity.KindWordsOf,
	"usersOf":       usersOf,
	"validity":      func(c servebench.CellResult) string { return report.ValidityLabel(&c) },
	"validityNotes": validityNotes,
	"skippedWhy":    skippedWhy,
}).Parse(pagesTemplate))

// validityNotes is what a cell's validity notes say, one reason a line, for its tooltip.
func validityNotes(c servebench.CellResult) string {
	var lines []string
	for _, r := range c.Validity.Reasons {
		if n := c.Validity.Notes[r]; n != "" {
			lines = append(lines, string(r)+": "+n)
		}
	}
	return strings.Join(lines, "\n")
}

// skippedWhy is why a planned cell was not measured, as "not measured: …" once (a runner's note
// may already begin with "skipped: ").
func skippedWhy(note string) string {
	note = strings.TrimPrefix(note, "skipped: ")
	if note == "" {
		return "not measured"
	}
	return "not measured: " + note
}

// usersCard is a use case's capacity in users as its card shows it before any what-if.
type usersCard struct {
	UseCase, Profile, Label, KindWords, Verdict string
}

// usersOf is the users' limit of use case name in res, worded as the what-if words it
// (capacity.ReconsiderUsers at the run's own thresholds); nil when the run measured none.
func usersOf(res servebench.Results, name string) *usersCard {
	for _, u := range res.Users {
		if u.UseCase != name {
			continue
		}
		c := &usersCard{UseCase: name, Profile: u.Profile, Label: capacity.LimitLabel(u.CapacityResult), KindWords: capacity.KindWordsOf(u.CapacityResult)}
		if u.Interrupted || u.Skipped {
			c.Verdict = "The users' search did not reach its verdict" + map[bool]string{true: " (interrupted)", false: ""}[u.Interrupted] + "."
			return c
		}
		uc := servebench.UseCase{Name: name, Title: u.Title, ContextTokens: servebench.Tokens(u.ContextTokens), OutputTokens: servebench.Tokens(u.OutputTokens), Statistic: u.Statistic, Thresholds: u.Thresholds}
		c.Verdict = capacity.ReconsiderUsers(uc, u.Ceiling, res.Cells).Verdict
		return c
	}
	return nil
}

// seconds formats a float64 or *float64 (nil: a value withheld) in seconds.
func seconds(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("%.3f s", x)
	case *float64:
		if x != nil {
			return fmt.Sprintf("%.3f s", *x)
		}
	}
	return "—"
}

// Pages renders the benchmark pages of a source: the same bytes for `servebench serve` and
// `servebench site`, every link relative so the pages work from any folder or file:// URL.
type Pages struct {
	Source Source
	// Version is servebench's version, printed in the footer.
	Version string
}

// page is what a template renders.
type page struct {
	Page, Title, Root, Version, API string
	Scripts                         []string
	List                            RunList
	Doc                             RunDoc
}

func (p *Pages) render(w io.Writer, name string, pg page) error {
	pg.Page, pg.Version, pg.API = name, p.Version, APIVersion
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, name, pg); err != nil {
		return fmt.Errorf("rendering the %s page: %w", name, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// IndexHTML writes index.html: every run, filterable, sortable and selectable for comparison.
func (p *Pages) IndexHTML(ctx context.Context, w io.Writer) error {
	l, err := p.Source.List(ctx)
	if err != nil {
		return err
	}
	return p.render(w, "index", page{Title: "Benchmark runs", List: l, Scripts: []string{"assets/app.js"}})
}

// RunHTML writes runs/ID/index.html: the run's headline, the capacity what-if, interpolated
// readings, its cells and its full report.
func (p *Pages) RunHTML(ctx context.Context, w io.Writer, id string) error {
	doc, err := p.Source.Run(ctx, id)
	if err != nil {
		return err
	}
	title := doc.Run.Model
	if doc.Run.Label != "" {
		title = doc.Run.Label + " · " + title
	}
	if doc.Run.Simulated {
		title += " (SIMULATED)"
	}
	return p.render(w, "run", page{Title: title, Root: "../../", Doc: doc,
		Scripts: []string{"data/runs/" + url.PathEscape(id) + ".js", "assets/wasm_exec.js", "assets/servebench.wasm.js", "assets/echarts.min.js", "assets/app.js"}})
}

// CompareHTML writes compare.html, which compares the runs named in its URL fragment
// (#runs=ID,ID) from their data files.
func (p *Pages) CompareHTML(w io.Writer) error {
	return p.render(w, "compare", page{Title: "Compare runs", Scripts: []string{"assets/wasm_exec.js", "assets/servebench.wasm.js", "assets/echarts.min.js", "assets/app.js"}})
}

// ReportHTML writes the run's full report (the same as its report.html, rendered from the
// folder as it is now, so a run in progress shows the cells finished so far).
func (p *Pages) ReportHTML(ctx context.Context, w io.Writer, id string) error {
	runs, err := p.Source.runs(ctx)
	if err != nil {
		return err
	}
	r, ok := runs[id]
	if !ok {
		return fmt.Errorf("%w %q", ErrNotFound, id)
	}
	m, res, err := p.Source.read(ctx, id, r)
	if err != nil {
		return err
	}
	samples, _ := store.ReadSamples(filepath.Join(r.dir, store.TelemetryFile))
	return report.HTML(w, report.Build(report.Input{Manifest: m, Results: res, Samples: samples}))
}

// RunJSON writes the run's document (API: /api/v1/runs/ID).
func (p *Pages) RunJSON(ctx context.Context, w io.Writer, id string) error {
	doc, err := p.Source.Run(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(w, doc)
}

// RunsJSON writes the list of runs (API: /api/v1/runs).
func (p *Pages) RunsJSON(ctx context.Context, w io.Writer) error {
	l, err := p.Source.List(ctx)
	if err != nil {
		return err
	}
	return writeJSON(w, l)
}

// RunJS writes data/runs/ID.js: the run's document as a script that registers it, so pages
// opened from file:// (where fetch is refused) can load it with a script element.
func (p *Pages) RunJS(ctx context.Context, w io.Writer, id string) error {
	doc, err := p.Source.Run(ctx, id)
	if err != nil {
		return err
	}
	b, err := json.Marshal(doc) // escapes <, > and &, and U+2028/U+2029
	if err != nil {
		return err
	}
	idJS, _ := json.Marshal(id)
	_, err = fmt.Fprintf(w, "(window.servebenchRuns = window.servebenchRuns || {})[%s] = %s;\nif (window.servebenchLoaded) window.servebenchLoaded(%s);\n", idJS, b, idJS)
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Asset returns a file under assets/ and its content type; ok is false for an unknown name.
func Asset(name string) (b []byte, contentType string, ok bool) {
	switch name {
	case "echarts.min.js":
		return []byte(assets.EChartsJS), "text/javascript; charset=utf-8", true
	case "servebench.wasm.js":
		return wasmJS(), "text/javascript; charset=utf-8", true
	}
	b, err := fs.ReadFile(assetFS, "assets/"+name)
	if err != nil || strings.Contains(name, "/") {
		return nil, "", false
	}
	switch path.Ext(name) {
	case ".css":
		return b, "text/css; charset=utf-8", true
	case ".js":
		return b, "text/javascript; charset=utf-8", true
	case ".wasm":
		return b, "application/wasm", true
	}
	return b, "application/octet-stream", true
}

// AssetNames lists the assets the pages load (Asset also serves servebench.wasm itself).
func AssetNames() []string {
	return []string{"app.js", "style.css", "wasm_exec.js", "servebench.wasm.js", "echarts.min.js"}
}

// wasmJS is servebench.wasm as a script defining servebenchWasm (base64): a page opened from
// file:// cannot fetch the .wasm file, but it can load a script.
var wasmJS = sync.OnceValue(func() []byte {
	b, err := assetFS.ReadFile("assets/servebench.wasm")
	if err != nil {
		panic("page: servebench.wasm is not embedded: " + err.Error())
	}
	return []byte("window.servebenchWasm = \"" + base64.StdEncoding.EncodeToString(b) + "\";\n")
})
