package report

import (
	"github.com/servebench/servebench"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Terminal writes the compact summary printed at the end of a run: the context × concurrency
// table (TTFT mean and p99, per-user generation speed, system throughput, success rate), then
// one capacity verdict per use case. Everything it writes passes the terminal sanitiser: each
// value from a server, plan or run folder on one line (termText), and the whole output once
// more (servebench.TerminalWriter), so no title can clear the screen or reorder a line.
func Terminal(w io.Writer, r *Report) error {
	tw := &mdWriter{w: &servebench.TerminalWriter{W: w}}
	head := r.Title + " — " + r.Subtitle
	if r.Simulated {
		head = "[SIMULATED] " + head
	}
	tw.printf("%s\n", termText(head, headingRunes))
	for _, h := range r.Highlights {
		tw.printf("  %s %s %s\n", termText(h.Value, cellRunes), termText(h.Label, cellRunes), termText(h.Condition, cellRunes))
	}
	tw.printf("\n")
	if len(r.Summary.Rows) == 0 {
		tw.printf("No sweep cell completed a request.\n")
	} else {
		writeAligned(tw, r.Summary.Header, r.Summary.Rows)
	}
	if len(r.Capacity) > 0 {
		tw.printf("\nCapacity (concurrent requests within the use case's thresholds):\n")
		var rows [][]string
		for _, v := range r.Capacity {
			rows = append(rows, []string{termText(v.Title, cellRunes) + " (" + v.Context + ")", v.LimitLabel, termText(v.Analysis, 0)})
		}
		writeAligned(tw, []string{"USE CASE", "LIMIT", "ANALYSIS"}, rows)
	}
	if len(r.PlanningSummary) > 0 {
		tw.printf("\nCapacity planning (%s):\n", termText(r.PlanningSummary[0], 0))
		for _, l := range r.PlanningSummary[1:] {
			tw.printf("  %s\n", termText(l, 0))
		}
	}
	if r.Simulated {
		tw.printf("\n[SIMULATED] every figure above comes from servebench's simulated engine, not real hardware.\n")
	}
	return tw.err
}

// Caps on text shown on a terminal or in a heading (runes); the JSON keeps the full value.
const (
	headingRunes = 160
	cellRunes    = 80
)

// termText is text from a server or plan made safe for a terminal, on one line, cut to n runes
// (0 = no cut).
func termText(s string, n int) string { return servebench.TerminalText(s, n, false) }

// writeAligned writes columns padded to their widest cell (runes, not bytes).
// Cells are sanitised first, so the widths are those of what is printed.
func writeAligned(tw *mdWriter, header []string, rows [][]string) {
	clean := func(row []string) []string {
		out := make([]string, len(row))
		for i, c := range row {
			out[i] = termText(c, 0)
		}
		return out
	}
	header = clean(header)
	rows = slices.Clone(rows) // the report's own rows stay as built
	for i := range rows {
		rows[i] = clean(rows[i])
	}
	width := make([]int, len(header))
	for _, row := range append([][]string{header}, rows...) {
		for i, c := range row {
			if i < len(width) && utf8.RuneCountInString(c) > width[i] {
				width[i] = utf8.RuneCountInString(c)
			}
		}
	}
	line := func(row []string) {
		var b strings.Builder
		for i, c := range row {
			if i == len(row)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
		}
		tw.printf("%s\n", strings.TrimRight(b.String(), " "))
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
}
