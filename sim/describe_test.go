package sim

import (
	"testing"

	"github.com/servebench/servebench"
)

// A simulated run's metadata names the organisation that published the model, not the
// simulator: GLM-4.7-Flash is Z.ai's. A declared organisation wins.
func TestMetadataNamesTheModelsOrganisation(t *testing.T) {
	for _, tt := range []struct{ profile, want string }{
		{"h200-glm47-flash", "Z.ai"},
		{"h100-llama8b", "Meta"},
		{"rtxpro6000-qwen36-35b-a3b-fp8-mtp", "Qwen (Alibaba)"},
		{"4xb200-step37-flash-mtp", "StepFun"},
		{"fast", "servebench (imaginary model)"},
	} {
		p, err := LookupProfile(tt.profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Metadata(servebench.Metadata{}).ModelOrg; got != tt.want {
			t.Errorf("%s: organisation %q, want %q", tt.profile, got, tt.want)
		}
	}
	p, _ := LookupProfile("h200-glm47-flash")
	if got := p.Metadata(servebench.Metadata{ModelOrg: "Zhipu"}).ModelOrg; got != "Zhipu" {
		t.Errorf("declared organisation replaced: %q", got)
	}
}
