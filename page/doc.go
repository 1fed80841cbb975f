// Package page renders the benchmark pages: the list of recorded runs, a page per run, a
// comparison of any selection, and the JSON documents behind them (API version APIVersion,
// described in docs/api.md). Handler serves them (servebench serve) and WriteSite writes the
// same files as a static site (servebench site); every link is relative and nothing is loaded
// from any other host.
//
// A run page's threshold what-if and its values between measured cells are computed in the
// browser by capacity.Reconsider and stats.Interpolate, compiled to WebAssembly from ./wasm
// (see gen.go): the page runs servebench's own rules, never a copy of them in JavaScript. The
// page's script only formats and draws.
//
//	p := &page.Pages{Source: page.Source{Index: ix}, Version: version}
//	http.ListenAndServe("127.0.0.1:8080", p.Handler())
package page
