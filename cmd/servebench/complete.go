package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/sim"
)

// Shell completion of flag values and arguments, served by cobra's hidden __complete command
// to the scripts `servebench completion bash|zsh|fish|powershell` prints.

// completeValues completes flag name of cmd from values. A comma-separated list flag (list)
// completes the element after the last comma, keeping the ones before it.
func completeValues(cmd *cobra.Command, name string, list bool, values func() []string) {
	_ = cmd.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		prefix := ""
		if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
			prefix = toComplete[:i+1]
		}
		var out []string
		for _, v := range values() {
			if strings.HasPrefix(prefix+v, toComplete) {
				out = append(out, prefix+v)
			}
		}
		d := cobra.ShellCompDirectiveNoFileComp
		if list || (len(out) == 1 && strings.HasSuffix(out[0], "=")) {
			d |= cobra.ShellCompDirectiveNoSpace // more to type: the next list element, or the value after key=
		}
		return out, d
	})
}

// fixed returns values as a completion source.
func fixed(values ...string) func() []string { return func() []string { return values } }

// completeFiles completes flag name with files ending in one of exts (any file without exts).
func completeFiles(cmd *cobra.Command, name string, exts ...string) {
	_ = cmd.MarkFlagFilename(name, exts...)
}

// completeDirs completes flag name with directories.
func completeDirs(cmd *cobra.Command, name string) { _ = cmd.MarkFlagDirname(name) }

// dirArgs completes positional arguments (RUN_DIR, OUT_DIR) with directories.
func dirArgs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

func profileNames() []string {
	var out []string
	for _, p := range sim.Profiles() {
		out = append(out, p.Name)
	}
	return out
}

func useCaseNames() []string {
	out := []string{"default", "none"}
	for _, u := range plan.DefaultUseCases() {
		out = append(out, u.Name)
	}
	return out
}

func scenarioNames() []string {
	out := []string{"default", "none"}
	for _, s := range plan.DemoScenarios() {
		out = append(out, s.Name)
	}
	return out
}

func metadataPairs() []string {
	var out []string
	for _, k := range plan.MetadataKeys() {
		out = append(out, k+"=")
	}
	return out
}

// completeRun wires the completions of run's flags.
func completeRun(cmd *cobra.Command) {
	completeFiles(cmd, "config", "yaml", "yml")
	completeDirs(cmd, "out")
	completeDirs(cmd, "resume")
	completeFiles(cmd, "index", "db")
	completeFiles(cmd, "dataset", "jsonl", "json")
	completeFiles(cmd, "trace", "jsonl")
	completeValues(cmd, "format", true, fixed("html", "md", "pdf", "json"))
	completeValues(cmd, "api", false, fixed("openai-chat", "openai-completions", "ollama"))
	completeValues(cmd, "mode", false, fixed("sustained", "dedicated", "fixed", "rate"))
	completeValues(cmd, "gpu", false, fixed("auto", "nvml", "dcgm=", "nvidia-smi", "none"))
	completeValues(cmd, "sim-profile", false, profileNames)
	completeValues(cmd, "use-cases", true, useCaseNames)
	completeValues(cmd, "scenarios", true, scenarioNames)
	completeValues(cmd, "tokenizer", false, fixed("cl100k_base", "o200k_base"))
	completeValues(cmd, "metadata", false, metadataPairs)
}
