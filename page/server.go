package page

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Handler serves the pages and the JSON API over HTTP, every path the same as in a site
// written by WriteSite, plus the API without the .json suffix:
//
//	/ and /index.html          the list of runs
//	/runs/ID/index.html        a run (also /runs/ID/)
//	/runs/ID/report.html       its full report
//	/compare.html#runs=A,B     a comparison
//	/data/runs/ID.js           a run's document as a script (what the pages load)
//	/assets/NAME               styles, script, WebAssembly, ECharts
//	/api/v1/runs[.json]        the list of runs (RunList)
//	/api/v1/runs/ID[.json]     one run (RunDoc)
//
// Every response is rendered from the index and the run folders as they are at the time of
// the request, so a run in progress is shown as far as it got.
func (p *Pages) Handler() http.Handler {
	mux := http.NewServeMux()
	page := func(ct string, f func(ctx context.Context, w io.Writer, r *http.Request) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var buf bytes.Buffer
			if err := f(r.Context(), &buf, r); err != nil {
				code := http.StatusInternalServerError
				if errors.Is(err, ErrNotFound) {
					code = http.StatusNotFound
				}
				http.Error(w, err.Error(), code)
				return
			}
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Cache-Control", "no-store")
			w.Write(buf.Bytes())
		}
	}
	const html, js, jsonCT = "text/html; charset=utf-8", "text/javascript; charset=utf-8", "application/json; charset=utf-8"
	index := page(html, func(ctx context.Context, w io.Writer, _ *http.Request) error { return p.IndexHTML(ctx, w) })
	mux.HandleFunc("GET /{$}", index)
	mux.HandleFunc("GET /index.html", index)
	mux.HandleFunc("GET /compare.html", page(html, func(_ context.Context, w io.Writer, _ *http.Request) error { return p.CompareHTML(w) }))
	run := page(html, func(ctx context.Context, w io.Writer, r *http.Request) error {
		return p.RunHTML(ctx, w, r.PathValue("id"))
	})
	mux.HandleFunc("GET /runs/{id}/{$}", run)
	mux.HandleFunc("GET /runs/{id}/index.html", run)
	mux.HandleFunc("GET /runs/{id}/report.html", page(html, func(ctx context.Context, w io.Writer, r *http.Request) error {
		return p.ReportHTML(ctx, w, r.PathValue("id"))
	}))
	mux.HandleFunc("GET /data/runs/{file}", page(js, func(ctx context.Context, w io.Writer, r *http.Request) error {
		id, ok := strings.CutSuffix(r.PathValue("file"), ".js")
		if !ok {
			return fmt.Errorf("%w: data files end in .js", ErrNotFound)
		}
		return p.RunJS(ctx, w, id)
	}))
	runs := page(jsonCT, func(ctx context.Context, w io.Writer, _ *http.Request) error { return p.RunsJSON(ctx, w) })
	mux.HandleFunc("GET /api/v1/runs", runs)
	mux.HandleFunc("GET /api/v1/runs.json", runs)
	mux.HandleFunc("GET /api/v1/runs/{id}", page(jsonCT, func(ctx context.Context, w io.Writer, r *http.Request) error {
		return p.RunJSON(ctx, w, strings.TrimSuffix(r.PathValue("id"), ".json"))
	}))
	mux.HandleFunc("GET /assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		b, ct, ok := Asset(r.PathValue("name"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(b)
	})
	return mux
}
