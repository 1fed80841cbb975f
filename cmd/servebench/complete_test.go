package main

import (
	"strings"
	"testing"
)

// Shell completion completes flag values (cobra's __complete, what the completion scripts
// call): fixed choices, the simulator's profiles, use-case names inside a comma-separated list,
// metadata keys, and file or folder completion where a path is expected.
func TestCompletionOfFlagValues(t *testing.T) {
	cases := []struct {
		args []string
		want []string // completions that must be offered
		not  []string // completions that must not be
		dir  string   // the directive line cobra ends with (":4" no files, ":6" no files no space, …)
	}{
		{[]string{"run", "--mode", "s"}, []string{"sustained"}, []string{"rate"}, ":4"},
		{[]string{"run", "--format", "html,p"}, []string{"html,pdf"}, []string{"pdf"}, ":6"},
		{[]string{"report", "--format", ""}, []string{"csv", "md"}, nil, ":6"},
		{[]string{"run", "--use-cases", "code_completion,gen"}, []string{"code_completion,general_chatbot"}, nil, ":6"},
		{[]string{"run", "--sim-profile", "h100"}, []string{"h100-llama8b"}, []string{"fast"}, ":4"},
		{[]string{"sim", "--profile", "f"}, []string{"fast"}, nil, ":4"},
		{[]string{"run", "--gpu", ""}, []string{"auto", "nvml", "nvidia-smi", "none", "dcgm="}, nil, ":4"},
		{[]string{"run", "--metadata", "gp"}, []string{"gpu="}, nil, ":6"},
		{[]string{"run", "--api", ""}, []string{"openai-chat", "openai-completions", "ollama"}, nil, ":4"},
		{[]string{"run", "--config", ""}, []string{"yaml", "yml"}, nil, ":8"}, // file extensions filter
		{[]string{"run", "--out", ""}, nil, nil, ":16"},                       // folders
		{[]string{"report", ""}, nil, nil, ":16"},
		{[]string{"compare", "runs/a", ""}, nil, nil, ":16"},
	}
	for _, c := range cases {
		code, stdout, stderr := runCLI(t, append([]string{"__complete"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", c.args, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		got := map[string]bool{}
		for _, l := range lines {
			got[strings.SplitN(l, "\t", 2)[0]] = true
		}
		for _, w := range c.want {
			if !got[w] {
				t.Errorf("%v: %q not offered:\n%s", c.args, w, stdout)
			}
		}
		for _, w := range c.not {
			if got[w] {
				t.Errorf("%v: %q offered:\n%s", c.args, w, stdout)
			}
		}
		if last := lines[len(lines)-1]; last != c.dir {
			t.Errorf("%v: directive %s, want %s", c.args, last, c.dir)
		}
	}
}
