package page

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteSite writes the pages as a static site into dir: the same files Handler serves, with
// relative links, for any static file server or straight from disk (file://). The what-if and
// the interpolated readings run in the page, so they work offline too. A run whose folder
// cannot be read is listed but gets no page. It returns the number of run pages written.
func (p *Pages) WriteSite(ctx context.Context, dir string) (int, error) {
	l, err := p.Source.List(ctx)
	if err != nil {
		return 0, err
	}
	write := func(name string, f func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, buf.Bytes(), 0o644)
	}
	files := map[string]func(io.Writer) error{
		"index.html":       func(w io.Writer) error { return p.IndexHTML(ctx, w) },
		"compare.html":     p.CompareHTML,
		"api/v1/runs.json": func(w io.Writer) error { return p.RunsJSON(ctx, w) },
	}
	for _, name := range AssetNames() {
		b, _, _ := Asset(name)
		files["assets/"+name] = func(w io.Writer) error { _, err := w.Write(b); return err }
	}
	pages := 0
	for _, r := range l.Runs {
		if r.Problem != "" {
			continue
		}
		id := r.ID
		files["runs/"+id+"/index.html"] = func(w io.Writer) error { return p.RunHTML(ctx, w, id) }
		files["runs/"+id+"/report.html"] = func(w io.Writer) error { return p.ReportHTML(ctx, w, id) }
		files["data/runs/"+id+".js"] = func(w io.Writer) error { return p.RunJS(ctx, w, id) }
		files["api/v1/runs/"+id+".json"] = func(w io.Writer) error { return p.RunJSON(ctx, w, id) }
		pages++
	}
	for name, f := range files {
		if err := write(name, f); err != nil {
			return 0, err
		}
	}
	return pages, nil
}
