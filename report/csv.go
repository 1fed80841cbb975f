package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	servebench "github.com/servebench/servebench"
)

// CellsCSV writes one row per cell of results.json (skipped cells included) with every scalar
// field as a column, named by its JSON path: "ttft_seconds.p99", "energy_joules.joules",
// "errors_by_class.timeout-first-token". The first columns identify the cell (cell_id, scenario,
// load_mode, context_tokens, output_tokens, concurrency). A value the cell does not have is an
// empty field. Values are written as results.json holds them (seconds, tokens/s, ratios).
func CellsCSV(w io.Writer, cells []servebench.CellResult) error {
	rows := make([]flatRow, 0, len(cells))
	for i := range cells {
		r, err := flatten(cells[i])
		if err != nil {
			return err
		}
		r.set("cell_id", cells[i].ID())
		rows = append(rows, r)
	}
	return writeFlat(w, rows, []string{"cell_id", "scenario", "load_mode", "context_tokens", "output_tokens", "concurrency"})
}

// RequestsCSV writes one row per record of requests.jsonl, failures included, with every scalar
// field as a column named by its JSON path (see CellsCSV). The first columns are seq, cell_id,
// phase and ok.
func RequestsCSV(w io.Writer, recs []servebench.Record) error {
	rows := make([]flatRow, 0, len(recs))
	for i := range recs {
		r, err := flatten(recs[i])
		if err != nil {
			return err
		}
		r.set("cell_id", recs[i].ID())
		r.set("ok", strconv.FormatBool(recs[i].OK()))
		rows = append(rows, r)
	}
	return writeFlat(w, rows, []string{"seq", "cell_id", "phase", "ok"})
}

// flatRow is one object flattened to JSON path → text, with the paths in document order.
type flatRow struct {
	keys []string
	vals map[string]string
}

func (r *flatRow) set(k, v string) {
	if _, ok := r.vals[k]; !ok {
		r.keys = append(r.keys, k)
	}
	r.vals[k] = v
}

// flatten marshals v to JSON and walks it in document order: objects nest with ".", arrays
// with their index; strings, numbers and booleans become fields, null an empty field.
func flatten(v any) (flatRow, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return flatRow{}, err
	}
	r := flatRow{vals: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		join := func(k string) string {
			if prefix == "" {
				return k
			}
			return prefix + "." + k
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				for dec.More() {
					kt, err := dec.Token()
					if err != nil {
						return err
					}
					if err := walk(join(kt.(string))); err != nil {
						return err
					}
				}
				_, err = dec.Token() // '}'
				return err
			case '[':
				for i := 0; dec.More(); i++ {
					if err := walk(join(strconv.Itoa(i))); err != nil {
						return err
					}
				}
				_, err = dec.Token() // ']'
				return err
			}
		case json.Number:
			r.set(prefix, t.String())
		case string:
			r.set(prefix, t)
		case bool:
			r.set(prefix, strconv.FormatBool(t))
		case nil:
			r.set(prefix, "")
		}
		return nil
	}
	if err := walk(""); err != nil {
		return flatRow{}, fmt.Errorf("flattening for CSV: %w", err)
	}
	return r, nil
}

// writeFlat writes the rows under the union of their columns: first the named ones, then every
// other in the order first seen (a column only some rows have, e.g. an error class, sorts after
// the fixed fields of its object).
func writeFlat(w io.Writer, rows []flatRow, first []string) error {
	seen := map[string]bool{}
	var cols []string
	for _, c := range first {
		seen[c] = true
		cols = append(cols, c)
	}
	var later []string
	for _, r := range rows {
		for _, k := range r.keys {
			if !seen[k] {
				seen[k] = true
				later = append(later, k)
			}
		}
	}
	// Keep each object's columns together: stable sort by the top-level name's first position.
	pos := map[string]int{}
	for i, k := range later {
		top := strings.SplitN(k, ".", 2)[0]
		if _, ok := pos[top]; !ok {
			pos[top] = i
		}
	}
	sort.SliceStable(later, func(i, j int) bool {
		return pos[strings.SplitN(later[i], ".", 2)[0]] < pos[strings.SplitN(later[j], ".", 2)[0]]
	})
	cols = append(cols, later...)
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return err
	}
	line := make([]string, len(cols))
	for _, r := range rows {
		for i, c := range cols {
			line[i] = csvSafe(r.vals[c])
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe defuses text a spreadsheet would run as a formula (a server's error message is
// hostile): a field starting with =, +, - or @ that is not a number gets a leading apostrophe.
func csvSafe(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}
