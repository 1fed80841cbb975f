// Command sb-tinymodel writes a small llama-architecture GGUF model with random weights, shaped
// so that generation never ends early or repeats (see package internal/tinymodel), for testing
// real inference engines without a model hub.
//
//	go run ./cmd/sb-tinymodel -size tiny -seed 1 -o tiny.gguf
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/servebench/servebench/internal/tinymodel"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sb-tinymodel:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sb-tinymodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.String("size", string(tinymodel.Tiny), "model shape: tiny (emb 256, 4 layers) or small (emb 512, 6 layers)")
	seed := fs.Int64("seed", 1, "seed of the random weights; the same size and seed give the same file")
	out := fs.String("o", "", "output file (required), e.g. tiny.gguf; - for stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-o is required (e.g. -o tiny.gguf)")
	}
	if _, err := tinymodel.Size(*size).Shape(); err != nil {
		return err
	}
	if *out == "-" {
		return tinymodel.Write(stdout, tinymodel.Size(*size), *seed)
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := tinymodel.Write(f, tinymodel.Size(*size), *seed); err != nil {
		f.Close()
		os.Remove(*out)
		return err
	}
	return f.Close()
}
