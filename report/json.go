package report

import (
	"encoding/json"
	"io"
)

// JSON writes the report model as indented JSON (report.json).
func JSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
