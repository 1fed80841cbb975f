package jsonschema

import (
	"os"
	"strings"
	"testing"
)

// The validator rejects what the schema forbids: a report missing run.uid, with a wrong unit,
// a negative count, an unknown field, or the wrong version type.
func TestSchemaValidatorRejects(t *testing.T) {
	s, err := Load("../../exchange/testdata/br_v0_2_1_json_schema.json")
	if err != nil {
		t.Fatal(err)
	}
	good := `{"version":"0.2.1","run":{"uid":"x"},"results":{"request_performance":{"aggregate":{"requests":{"total":3}}}}}`
	var v any
	if err := Decode([]byte(good), &v); err != nil {
		t.Fatal(err)
	}
	if errs := s.Validate(v); len(errs) != 0 {
		t.Fatalf("a minimal report: %v", errs)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"no uid", `{"run":{},"results":{}}`, `required "uid" missing`},
		{"no results", `{"run":{"uid":"x"}}`, `required "results" missing`},
		{"unit", `{"run":{"uid":"x"},"results":{"request_performance":{"aggregate":{"latency":{"time_to_first_token":{"units":"seconds","mean":1}}}}}}`, "is not one of"},
		{"negative", `{"run":{"uid":"x"},"results":{"request_performance":{"aggregate":{"requests":{"total":-1}}}}}`, "below the minimum"},
		{"unknown field", `{"run":{"uid":"x","colour":"blue"},"results":{}}`, `property "colour" is not allowed`},
		{"version type", `{"version":2,"run":{"uid":"x"},"results":{}}`, "type"},
		{"stat without mean", `{"run":{"uid":"x"},"results":{"request_performance":{"aggregate":{"throughput":{"output_token_rate":{"units":"tokens/s"}}}}}}`, `required "mean" missing`},
	} {
		var v any
		if err := Decode([]byte(tc.doc), &v); err != nil {
			t.Fatal(err)
		}
		errs := strings.Join(s.Validate(v), "\n")
		if !strings.Contains(errs, tc.want) {
			t.Errorf("%s: errors %q, want one saying %q", tc.name, errs, tc.want)
		}
	}
}

// A schema with a keyword Validate does not enforce is refused rather than half-checked.
func TestLoadRefusesUnknownKeywords(t *testing.T) {
	path := t.TempDir() + "/s.json"
	if err := os.WriteFile(path, []byte(`{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "pattern") {
		t.Fatalf("Load: %v, want a refusal naming pattern", err)
	}
}
