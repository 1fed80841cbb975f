package page

// servebench.wasm is committed: `go build` cannot run a second build for another GOOS, and a
// user's `go install` must get a working page without a Go toolchain at run time. It is
// rebuilt from ./wasm (packages capacity and stats, compiled for the browser) by
//
//	go generate ./page
//
// which runs TestWasmUpToDate with -update: the test builds the module exactly as below
// (GOOS=js GOARCH=wasm, -trimpath, -ldflags=-s -w, so the bytes do not depend on the folder or
// the machine), copies wasm_exec.js from the same toolchain, and records the Go version; run
// without -update it fails when the committed files differ from a fresh build, i.e. when
// capacity or stats changed and the page would run stale rules.

//go:generate go test -count=1 -run TestWasmUpToDate . -update
