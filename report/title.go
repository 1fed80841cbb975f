package report

import (
	"fmt"
	"strings"
	"time"
)

func (b *builder) title() {
	r := b.rep
	r.Title = b.modelName()
	hw := b.md.GPU
	if hw == "" {
		hw = "undeclared hardware (set metadata.gpu in the plan)"
	}
	r.Subtitle = "Performance analysis on " + hw
	if e := b.engineName(); e != "" {
		r.Subtitle += ", served by " + e
	}
	if im := b.imported(); im != nil {
		r.Subtitle = b.importedSubtitle(im)
	}
	if r.Simulated {
		declared := "the hardware"
		if b.md.GPU != "" || b.md.Engine != "" {
			declared = strings.TrimSuffix(strings.Join([]string{b.md.GPU, b.md.Engine}, ", "), ", ")
			declared = strings.TrimPrefix(declared, ", ")
		}
		if b.man.Plan.Target.URL == "" {
			r.Subtitle = "SIMULATED on servebench's built-in simulated engine, not measured on any GPU"
		} else {
			r.Subtitle = "SIMULATED on servebench's simulated engine, not measured on " + declared
			if b.md.GPU != "" || b.md.Engine != "" {
				r.Subtitle += " (as the plan declares)"
			}
		}
		engine := "servebench's built-in simulated engine"
		if prof := b.man.Plan.Target.SimProfile; prof != "" {
			engine += fmt.Sprintf(" (profile %q)", prof)
		}
		if b.man.Server.Engine == "sim" && b.man.Plan.Target.URL != "" {
			engine = "a servebench simulated engine (servebench sim"
			if b.man.Server.Version != "" {
				engine += ", " + b.man.Server.Version
			}
			engine += ") at " + b.man.Plan.Target.URL
		}
		r.Banner = fmt.Sprintf("SIMULATED: every figure in this report was produced by %s, not by a real GPU or inference server, whatever the plan declares about the hardware. Use it to see the pipeline and what-if trends, never as a hardware measurement.", engine)
	}
	run := []string{r.Title}
	if b.md.GPU != "" {
		run = append(run, b.md.GPU)
	}
	if e := b.engineName(); e != "" {
		run = append(run, e)
	}
	r.RunningHeader = strings.Join(run, " · ")
	if r.Simulated {
		r.RunningHeader += " (as declared)"
	}
	dash := func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "—"
		}
		return s
	}
	if im := b.imported(); im != nil && b.modelName() == "unnamed model" {
		r.Title = "Model not named in the " + im.Tool + " result file"
	}
	r.ModelTable = []Field{
		{"Model", r.Title},
		{"Organization", dash(b.md.ModelOrg)},
		{"Parameters", dash(b.md.Parameters)},
		{"Architecture", dash(b.md.Architecture)},
		{"Precision", dash(b.md.Precision)},
		{"KV cache", dash(b.md.KVCache)},
		{"Speculative decoding", dash(b.md.SpeculativeDecoding)},
	}
	maxLen := "—"
	if b.man.Server.MaxModelLen > 0 {
		maxLen = fmtInt(b.man.Server.MaxModelLen) + " tokens"
	}
	gpu := dash(b.md.GPU)
	if im := b.imported(); im != nil && b.md.GPU == "" {
		gpu = "not declared in the " + im.Tool + " result file"
	}
	r.HardwareTable = []Field{
		{"GPU", gpu},
		{"VRAM", dash(b.md.VRAM)},
		{"Engine", dash(b.engineName())},
		{"Engine flags", dash(b.md.EngineFlags)},
		{"Detected engine", dash(b.man.Server.Engine)},
		{"Max model length", maxLen},
		{"Token counting", dash(b.man.Server.TokenCounting)},
	}
	target := b.man.Plan.Target.URL
	if target == "" {
		target = b.res.Run.Target
	}
	if target == "" && r.Simulated {
		target = "built-in simulator"
	}
	api := string(b.man.Plan.Target.API)
	if api == "" {
		api = string(b.res.Run.API)
	}
	started, finished := b.man.StartedAt, b.man.FinishedAt
	if started.IsZero() {
		started, finished = b.res.Run.StartedAt, b.res.Run.FinishedAt
	}
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	dur := "—"
	if !started.IsZero() && !finished.IsZero() && finished.After(started) {
		dur = finished.Sub(started).Round(time.Second).String()
	}
	id := b.man.ID
	if id == "" {
		id = b.res.Run.ID
	}
	r.Run = RunMeta{ID: id, Target: target, API: api, Model: b.man.Plan.Target.Model, Status: dash(b.man.Status),
		ToolVersion: dash(b.man.ToolVersion), StartedAt: ts(started), FinishedAt: ts(finished), Duration: dur}
}

// reproduce writes the command that made the run, as recorded in run.json (secrets already
// redacted there), and where its resolved plan is kept.
func (b *builder) reproduce() {
	cmd := b.man.Command
	if len(cmd) == 0 {
		return
	}
	args := make([]string, len(cmd))
	for i, a := range cmd {
		args[i] = shellQuote(a)
	}
	args[0] = "servebench" // whatever the binary was called (go run builds it under a temporary path)
	if im := b.man.Imported; im != nil {
		b.rep.Reproduce = strings.Join(args, " ") + " — the result file's name and SHA-256 are saved in this run's run.json under \"imported\"."
		return
	}
	b.rep.Reproduce = strings.Join(args, " ") + " — the resolved plan, every setting with its default, is saved in this run's run.json under \"plan\"."
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
