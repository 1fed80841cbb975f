// Package jsonschema validates JSON documents against a JSON Schema (draft 2020-12) for
// tests, implementing the keywords the exchange formats' schemas use: $defs and local $ref,
// type, enum, const, required, properties, additionalProperties, items, anyOf, oneOf, minimum
// and exclusiveMinimum. Load refuses a schema that uses any other keyword, so a constraint this
// package does not implement can never pass unchecked. Annotations (title, description,
// default, format, discriminator, and pydantic's "ge", which JSON Schema ignores) constrain
// nothing. No validator library is a dependency of this module.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
)

// implemented are the keywords Validate enforces; annotations constrain nothing.
var (
	implemented = []string{"$defs", "$ref", "additionalProperties", "anyOf", "const", "enum", "exclusiveMinimum", "items", "minimum", "oneOf", "properties", "required", "type"}
	annotations = []string{"default", "description", "discriminator", "format", "ge", "title", "examples", "$schema", "$id"}
)

// Schema is a loaded JSON Schema.
type Schema struct{ root map[string]any }

// Load reads the schema at path. A schema using a keyword Validate does not implement is
// refused, naming the keywords.
func Load(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := Decode(b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var unknown []string
	var walk func(v any, schema bool)
	walk = func(v any, schema bool) {
		m, ok := v.(map[string]any)
		if !ok || !schema {
			return
		}
		for k, sub := range m {
			switch {
			case k == "properties" || k == "$defs":
				for _, s := range sub.(map[string]any) {
					walk(s, true)
				}
			case k == "anyOf" || k == "oneOf":
				for _, s := range sub.([]any) {
					walk(s, true)
				}
			case k == "items" || k == "additionalProperties":
				walk(sub, true)
			case slices.Contains(implemented, k) || slices.Contains(annotations, k):
			default:
				unknown = append(unknown, k)
			}
		}
	}
	walk(root, true)
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("%s uses keywords this validator does not implement: %v", path, slices.Compact(unknown))
	}
	return &Schema{root: root}, nil
}

// Decode decodes JSON keeping numbers as json.Number, as Validate needs them (an integer is
// told from a number by its value).
func Decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// Validate returns every violation of the schema by v (decoded by Decode), each with its
// JSON path ("$.run.uid: ..."); none when v is valid.
func (d *Schema) Validate(v any) []string { return d.check(d.root, v, "$") }

func (d *Schema) resolve(ref string) map[string]any {
	const p = "#/$defs/"
	if !strings.HasPrefix(ref, p) {
		panic("unsupported $ref " + ref)
	}
	return d.root["$defs"].(map[string]any)[strings.TrimPrefix(ref, p)].(map[string]any)
}

func typeOf(v any) []string {
	switch x := v.(type) {
	case nil:
		return []string{"null"}
	case bool:
		return []string{"boolean"}
	case string:
		return []string{"string"}
	case json.Number:
		f, _ := x.Float64()
		if f == math.Trunc(f) && !math.IsInf(f, 0) {
			return []string{"number", "integer"}
		}
		return []string{"number"}
	case []any:
		return []string{"array"}
	case map[string]any:
		return []string{"object"}
	}
	return []string{fmt.Sprintf("%T", v)}
}

func equal(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return bytes.Equal(ab, bb)
}

func (d *Schema) check(s map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if ref, ok := s["$ref"].(string); ok {
		errs = append(errs, d.check(d.resolve(ref), v, path)...)
	}
	if t, ok := s["type"]; ok {
		var want []string
		switch t := t.(type) {
		case string:
			want = []string{t}
		case []any:
			for _, x := range t {
				want = append(want, x.(string))
			}
		}
		if !slices.ContainsFunc(typeOf(v), func(g string) bool { return slices.Contains(want, g) }) {
			fail("type %v, want %v", typeOf(v), want)
			return errs
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return equal(x, v) }) {
		fail("%v is not one of %v", v, e)
	}
	if c, ok := s["const"]; ok && !equal(c, v) {
		fail("%v is not %v", v, c)
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := s["minimum"].(json.Number); ok {
			if mf, _ := m.Float64(); f < mf {
				fail("%v is below the minimum %v", f, mf)
			}
		}
		if m, ok := s["exclusiveMinimum"].(json.Number); ok {
			if mf, _ := m.Float64(); f <= mf {
				fail("%v is not above %v", f, mf)
			}
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		if !slices.ContainsFunc(alts, func(sub any) bool { return len(d.check(sub.(map[string]any), v, path)) == 0 }) {
			var why []string
			for _, sub := range alts {
				why = append(why, d.check(sub.(map[string]any), v, path)...)
			}
			fail("matches none of anyOf: %s", strings.Join(why, "; "))
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		n := 0
		var why []string
		for _, sub := range one {
			e := d.check(sub.(map[string]any), v, path)
			if len(e) == 0 {
				n++
			}
			why = append(why, e...)
		}
		if n != 1 {
			fail("matches %d of oneOf, want exactly 1: %s", n, strings.Join(why, "; "))
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					fail("required %q missing", r)
				}
			}
		}
		for k, val := range obj {
			if ps, ok := props[k]; ok {
				errs = append(errs, d.check(ps.(map[string]any), val, path+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("property %q is not allowed", k)
				}
			case map[string]any:
				errs = append(errs, d.check(ap, val, path+"."+k)...)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				errs = append(errs, d.check(items, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}
