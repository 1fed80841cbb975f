package report

import (
	"reflect"
)

// displayInput returns in with the identity strings a server or a plan supplies (model and
// engine names, version, target, metadata) made safe for display: control characters and bidi
// overrides removed, each cut to headingRunes. Reports quote them in headings and prose; the
// run's JSON files keep the full values.
func displayInput(in Input) Input {
	c := func(s *string) { *s = termText(*s, headingRunes) }
	m := &in.Manifest
	c(&m.Plan.Target.Model)
	c(&m.Plan.Target.URL)
	c(&m.Server.Engine)
	c(&m.Server.Version)
	models := make([]string, len(m.Server.Models))
	for i, s := range m.Server.Models {
		models[i] = termText(s, headingRunes)
	}
	m.Server.Models = models
	c(&in.Results.Run.Model)
	c(&in.Results.Run.Target)
	md := reflect.ValueOf(&m.Plan.Metadata).Elem()
	for i := range md.NumField() {
		if f := md.Field(i); f.Kind() == reflect.String && f.CanSet() {
			f.SetString(termText(f.String(), headingRunes))
		}
	}
	return in
}
