package report

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes the report as GitHub-flavoured Markdown; charts become tables.
func Markdown(w io.Writer, r *Report) error {
	m := &mdWriter{w: w}
	if r.Simulated {
		m.printf("# %s — SIMULATED\n\n", mdText(termText(r.Title, headingRunes)))
		m.printf("**%s**\n\n", mdText(r.Subtitle))
	} else {
		m.printf("# %s\n\n", mdText(termText(r.Title, headingRunes)))
		m.printf("%s\n\n", mdText(r.Subtitle))
	}
	if r.Banner != "" {
		m.printf("> **%s**\n\n", mdText(r.Banner))
	}
	m.table(&Table{Header: []string{"MODEL", "", "TEST HARDWARE", ""}, Rows: pairRows(r.ModelTable, r.HardwareTable)})
	m.printf("Run `%s` · status %s · target %s · %s → %s (%s) · servebench %s\n\n",
		mdCode(r.Run.ID), mdText(r.Run.Status), mdText(r.Run.Target), r.Run.StartedAt, r.Run.FinishedAt, r.Run.Duration, mdText(r.Run.ToolVersion))
	m.printf("## Highlights\n\n")
	for _, h := range r.Highlights {
		m.printf("- **%s** %s — %s\n", mdText(h.Value), mdText(h.Label), mdText(h.Condition))
	}
	m.printf("\n## Contents\n\n")
	for _, s := range r.Sections {
		m.printf("%s- [%s](#%s)\n", strings.Repeat("  ", max(0, s.Level-1)), mdText(s.Title), s.ID)
	}
	m.printf("\n")
	for _, s := range r.Sections {
		m.section(s)
	}
	if r.Simulated {
		m.printf("---\n\n**SIMULATED** — %s\n", mdText(r.Banner))
	}
	return m.err
}

// CompareMarkdown writes a comparison of several runs as Markdown.
func CompareMarkdown(w io.Writer, c *Comparison) error {
	m := &mdWriter{w: w}
	m.printf("# %s\n\n", mdText(termText(c.Title, headingRunes)))
	if c.Banner != "" {
		m.printf("> **%s**\n\n", mdText(c.Banner))
	}
	for _, s := range c.Sections {
		m.section(s)
	}
	return m.err
}

type mdWriter struct {
	w   io.Writer
	err error
}

func (m *mdWriter) printf(format string, a ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, a...)
	}
}

func (m *mdWriter) section(s Section) {
	m.printf("%s <a id=\"%s\"></a>%s\n\n", strings.Repeat("#", s.Level+1), s.ID, mdText(termText(s.Title, headingRunes)))
	for _, b := range s.Blocks {
		switch b.Kind {
		case BlockParagraph:
			m.printf("%s\n\n", mdText(b.Text))
		case BlockNote:
			m.printf("> %s\n\n", mdText(b.Text))
		case BlockMissing:
			m.printf("> **Not available.** %s\n\n", mdText(b.Text))
		case BlockVerdict:
			m.printf("**%s**\n\n", mdText(b.Text))
		case BlockTable:
			m.table(b.Table)
		case BlockChart:
			m.chart(b.Chart)
		}
	}
}

func (m *mdWriter) table(t *Table) {
	if t == nil || len(t.Header) == 0 {
		return
	}
	if t.Caption != "" {
		m.printf("*%s*\n\n", mdText(t.Caption))
	}
	cells := func(row []string) string {
		out := make([]string, len(row))
		for i, c := range row {
			out[i] = mdCell(c)
		}
		return "| " + strings.Join(out, " | ") + " |\n"
	}
	m.printf("%s", cells(t.Header))
	sep := make([]string, len(t.Header))
	for i := range sep {
		sep[i] = "---"
	}
	m.printf("|%s|\n", strings.Join(sep, "|"))
	for _, r := range t.Rows {
		m.printf("%s", cells(r))
	}
	m.printf("\n")
}

// chart renders a chart as a table: one row per x value, one column per series.
func (m *mdWriter) chart(c *Chart) {
	t := chartTable(c)
	m.printf("*%s — %s*\n\n", mdText(c.Title), mdText(c.Caption))
	m.table(t)
	if len(c.Thresholds) > 0 {
		var th []string
		for _, x := range c.Thresholds {
			th = append(th, x.Name)
		}
		m.printf("Thresholds (dashed lines in the HTML report): %s.\n\n", mdText(strings.Join(th, "; ")))
	}
}

// chartTable lays a chart's series out as a table (used by Markdown).
func chartTable(c *Chart) *Table {
	t := &Table{Header: []string{c.XName}}
	for _, s := range c.Series {
		unit := c.YName
		if s.Axis == 1 && c.Y2Name != "" {
			unit = c.Y2Name
		}
		t.Header = append(t.Header, fmt.Sprintf("%s (%s)", s.Name, unit))
	}
	for i, x := range c.X {
		row := []string{x}
		for _, s := range c.Series {
			if i < len(s.Data) && s.Data[i] != nil {
				d := c.Decimals
				if s.Axis == 1 {
					d = c.Decimals2
				}
				v := fmtNum(*s.Data[i], d)
				if i < len(s.Marks) && s.Marks[i] != "" {
					v += " (" + s.Marks[i] + ")"
				}
				row = append(row, v)
			} else {
				row = append(row, "—")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func pairRows(a, b []Field) [][]string {
	n := max(len(a), len(b))
	rows := make([][]string, n)
	for i := range n {
		row := []string{"", "", "", ""}
		if i < len(a) {
			row[0], row[1] = a[i].Label, a[i].Value
		}
		if i < len(b) {
			row[2], row[3] = b[i].Label, b[i].Value
		}
		rows[i] = row
	}
	return rows
}

// mdText escapes what Markdown or inline HTML would interpret, so text from the server or the
// plan renders literally and can never become a tag, a link, emphasis or a table break, while
// ordinary text stays readable in the raw file: "<" becomes "&lt;" only where it could open a
// tag, comment or autolink (before a letter, "/", "!" or "?"), "&" becomes "&amp;" only where
// it could start an entity, and ">" is escaped only where it would start a block quote.
func mdText(s string) string {
	s = termText(s, 0) // no control character, bidi override or newline from a server or plan
	var b strings.Builder
	b.Grow(len(s) + 8)
	lead := true // only blanks written so far: a ">" here would open a block quote
	for i := 0; i < len(s); i++ {
		c := s[i]
		var next byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		atStart := lead
		lead = lead && (c == ' ' || c == '\t' || c == '\n' || c == '\r')
		switch c {
		case '<':
			if isASCIILetter(next) || next == '/' || next == '!' || next == '?' {
				b.WriteString("&lt;")
				continue
			}
		case '&':
			if isASCIILetter(next) || next == '#' {
				b.WriteString("&amp;")
				continue
			}
		case '>':
			if atStart {
				b.WriteString("\\>")
				continue
			}
		case '\\', '*', '_', '`', '[', ']', '|':
			b.WriteByte('\\')
		case '\n', '\r':
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// mdCell is a table cell (identity strings are already cut by displayInput).
func mdCell(s string) string { return mdText(s) }

func mdCode(s string) string { return strings.ReplaceAll(termText(s, 0), "`", "'") }
