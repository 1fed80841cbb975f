package page

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rebuild assets/servebench.wasm, assets/wasm_exec.js and assets/GO-VERSION")

// wasmBuild are the arguments of the one build of servebench.wasm (see gen.go).
var wasmBuild = []string{"build", "-trimpath", "-ldflags=-s -w", "-o"}

// TestWasmUpToDate rebuilds servebench.wasm from ./wasm and fails when the committed one
// differs: the page must run the capacity and interpolation code of this very tree. The build
// is only reproducible with the same Go release, so with another toolchain the test says so and
// skips; go generate ./page rebuilds the files with yours.
func TestWasmUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly module (about a minute)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to rebuild servebench.wasm: %v", err)
	}
	// The toolchain that builds the module: the go command's own release and root, which
	// may differ from the ones this test binary was built with.
	env, err := exec.Command(goBin, "env", "GOVERSION", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	goVersion, goRoot, _ := strings.Cut(strings.TrimSpace(string(env)), "\n")
	recorded, _ := os.ReadFile("assets/GO-VERSION")
	if !*update && strings.TrimSpace(string(recorded)) != goVersion {
		t.Skipf("assets/servebench.wasm was built with %s, this is %s: the bytes cannot be compared (go generate ./page rebuilds it)",
			strings.TrimSpace(string(recorded)), goVersion)
	}
	out := filepath.Join(t.TempDir(), "servebench.wasm")
	cmd := exec.Command(goBin, append(wasmBuild, out, "./wasm")...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building servebench.wasm: %v\n%s", err, b)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	execJS, err := os.ReadFile(filepath.Join(goRoot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		t.Fatalf("wasm_exec.js of this toolchain: %v", err)
	}
	want := map[string][]byte{"servebench.wasm": fresh, "wasm_exec.js": execJS, "GO-VERSION": []byte(goVersion + "\n")}
	for name, b := range want {
		path := filepath.Join("assets", name)
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s is stale (capacity, stats or the page's Go code changed): run go generate ./page and commit it", path)
		}
	}
}
