package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/servebench/servebench"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/store"
)

func newRunsCmd(e *env) *cobra.Command {
	var index string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs recorded in the runs index (newest first)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ix, err := openIndex(e, index)
			if err != nil {
				return err
			}
			defer ix.Close()
			path := ix.Where()
			list, err := ix.List(cmd.Context())
			if err != nil {
				return withCode(exitError, err)
			}
			if len(list) == 0 {
				fmt.Fprintf(e.stdout, "no runs recorded in %s yet: servebench run records each run there\n", path)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tLABEL\tSTARTED\tSTATUS\tTARGET KIND\tMODEL\tTARGET\tPEAK tok/s\tDIR")
			missing := 0
			for _, r := range list {
				t := func(s string) string { return servebench.TerminalText(s, 60, false) }
				kind := store.TargetKind(r)
				dir := servebench.TerminalText(r.Dir, 0, false)
				if elsewhere(r.Host) {
					dir = servebench.TerminalText(r.Host, 60, false) + ":" + dir
				}
				if state := folderState(r.Dir, r.ID); state != "" && !elsewhere(r.Host) {
					dir = state + " " + dir
					missing++
				}
				label := cmp.Or(t(r.Label), "—")
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n", t(r.ID), label, r.StartedAt.Format("2006-01-02 15:04"), t(r.Status), kind, t(r.Model), t(r.Target), r.PeakThroughputTPS, dir)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if missing > 0 {
				fmt.Fprintf(e.stdout, "\n%d of %d runs are MISSING or REPLACED: their folder (or its run.json) is gone, moved or deleted, or now holds another run, so report, compare and serve cannot open them; the index keeps their summary above.\n", missing, len(list))
			}
			return nil
		},
	}
	registerIndex(cmd, &index, "")
	return cmd
}

// elsewhere says whether a run was recorded on another machine (into a shared store): its
// folder is there, and the pages show it from the documents the store keeps.
func elsewhere(host string) bool {
	me, err := os.Hostname()
	return host != "" && err == nil && host != me
}

// folderState says whether a run's folder still holds it: "" when it does, "MISSING" when the
// folder or its run.json is gone, "REPLACED" when run.json now belongs to another run.
func folderState(dir, id string) string {
	b, err := store.ReadRunFile(filepath.Join(dir, store.ManifestFile))
	if err != nil {
		return "MISSING"
	}
	var m struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(b, &m) == nil && m.ID != "" && m.ID != id {
		return "REPLACED"
	}
	return ""
}
