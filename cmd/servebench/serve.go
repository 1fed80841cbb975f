package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/page"
)

// pagesFlags are the flags serve and site share.
type pagesFlags struct {
	e     *env
	index string
}

func (f *pagesFlags) register(cmd *cobra.Command) {
	registerIndex(cmd, &f.index, "")
}

// pages opens the runs index and returns the pages over it and the run folders dirs; close
// releases the index.
func (f *pagesFlags) pages(dirs []string) (p *page.Pages, close func(), err error) {
	ix, err := openIndex(f.e, f.index)
	if err != nil {
		return nil, nil, err
	}
	p = &page.Pages{Source: page.Source{Index: ix, Dirs: dirs}, Version: version}
	if _, err := p.Source.List(context.Background()); err != nil {
		ix.Close()
		return nil, nil, withCode(exitUsage, err)
	}
	return p, func() { ix.Close() }, nil
}

func newServeCmd(e *env) *cobra.Command {
	f := pagesFlags{e: e}
	var listen string
	cmd := &cobra.Command{
		Use:   "serve [RUN_DIR...] [--listen 127.0.0.1:8080]",
		Short: "Browse every recorded run in a local web app: compare runs, read between cells, try other thresholds",
		Long: `serve starts a local web application over the runs index: the list of runs (filter, sort, select
to compare), a page per run with its full report, a comparison of any selection, values read
between the measured cells, and a what-if that decides each use case's capacity again for the
thresholds you type. Everything is served by this binary; the pages load nothing from any other
host. Run folders named as arguments are shown too, e.g. a run still in progress, whose page
follows it as cells finish. The JSON API is under /api/v1 (docs/api.md).`,
		Example: `  servebench serve
  servebench serve runs/demo --listen 127.0.0.1:9000`,
		ValidArgsFunction: dirArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, closeIndex, err := f.pages(args)
			if err != nil {
				return err
			}
			defer closeIndex()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("--listen %s: %w (choose another address or port)", listen, err))
			}
			handler := p.Handler()
			if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
				fmt.Fprintf(e.stderr, "servebench: listening on %s: the pages (run folders' contents) are reachable from other hosts\n", ln.Addr())
			} else {
				handler = loopbackOnly(handler)
			}
			srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(e.stdout, "serving the benchmark pages at http://%s/ (Ctrl-C stops)\n", ln.Addr())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case err := <-done:
				return withCode(exitError, err)
			case <-cmd.Context().Done():
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
					return withCode(exitError, err)
				}
				return nil
			}
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to serve on (host:port)")
	return cmd
}

// loopbackOnly refuses requests whose Host is not a loopback name or address: a web page on
// another site that points its own host name at 127.0.0.1 (DNS rebinding) must not read the
// runs through the visitor's browser.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		host = strings.Trim(host, "[]")
		if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			http.Error(w, "servebench serve answers only requests addressed to localhost or a loopback address", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
