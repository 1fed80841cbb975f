package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// requestControl sets the client's headers, sampling parameters and extra body from the plan.
// Header values have ${NAME} expanded from the environment; the values of secret-looking
// headers join the secrets every output is redacted of.
func requestControl(cfg *openai.Config, rc servebench.RequestControl, getenv func(string) string, sec *secrets) error {
	if len(rc.Headers) > 0 {
		cfg.Headers = http.Header{}
		for name, v := range rc.Headers {
			var missing []string
			v = os.Expand(v, func(k string) string {
				x := getenv(k)
				if x == "" {
					missing = append(missing, k)
				}
				return x
			})
			if len(missing) > 0 {
				return fmt.Errorf("header %s names the environment variable %s, which is not set: export it or write the value", name, strings.Join(missing, ", "))
			}
			cfg.Headers.Set(name, v)
			if plan.SecretHeader(name) {
				sec.add(v)
				if _, after, ok := strings.Cut(v, " "); ok { // "Bearer sk-…": the token alone too
					sec.add(after)
				}
			}
		}
	}
	cfg.Temperature, cfg.TopP, cfg.Seed = rc.Temperature, rc.TopP, rc.Seed
	if len(rc.ExtraBody) > 0 {
		b, err := json.Marshal(rc.ExtraBody)
		if err != nil {
			return fmt.Errorf("request.extra_body: %v", err)
		}
		cfg.ExtraBody = b
	}
	return nil
}

// loadTrace reads the plan's trace (nil when none); prompts come from b.
func loadTrace(t *servebench.TracePlan, b *workload.Builder) (*workload.TraceReplay, string, error) {
	if t == nil {
		return nil, "", nil
	}
	tr, err := workload.LoadTrace(t.Path)
	if err != nil {
		return nil, "", err
	}
	last := tr.Entries[len(tr.Entries)-1].At
	note := fmt.Sprintf("trace %s: %d requests over %s, replayed at %g× speed, %d tokens per hash id", t.Path, len(tr.Entries), last, t.Speed, t.BlockTokens)
	return &workload.TraceReplay{T: tr, B: b, Speed: t.Speed, BlockTokens: t.BlockTokens}, note, nil
}

// readDataset reads the plan's dataset with its filters and sampling.
func readDataset(d *servebench.DatasetPlan) (*workload.Dataset, error) {
	return workload.LoadDataset(d.Path, workload.DatasetOptions{MinOutputTokens: d.MinOutputTokens,
		MaxOutputTokens: d.MaxOutputTokens, MaxPromptChars: d.MaxPromptChars, Sample: d.Sample, Seed: d.Seed})
}

// droppedNote says how many entries the length filters removed ("" when none).
func droppedNote(ds *workload.Dataset) string {
	if ds.Dropped > 0 {
		return fmt.Sprintf("; %d dropped by the length filters", ds.Dropped)
	}
	return ""
}

// loadDataset reads the plan's dataset (nil when none, or when it feeds sessions) and says what
// it holds.
func loadDataset(d *servebench.DatasetPlan) (*workload.Replay, string, error) {
	if d == nil || d.Sessions {
		return nil, "", nil
	}
	ds, err := readDataset(d)
	if err != nil {
		return nil, "", err
	}
	note := fmt.Sprintf("dataset %s (%s): %d entries replayed in order, cycling", d.Path, ds.Format, len(ds.Entries)) + droppedNote(ds)
	return workload.NewReplay(ds), note, nil
}

// loadSessionScript reads a ShareGPT dataset whose conversations run whole as multi-turn
// sessions (dataset.sessions); nil when the plan asks for none.
func loadSessionScript(d *servebench.DatasetPlan) ([]runner.ScriptedSession, string, error) {
	if d == nil || !d.Sessions {
		return nil, "", nil
	}
	ds, err := readDataset(d)
	if err != nil {
		return nil, "", err
	}
	if ds.Format != "sharegpt" {
		return nil, "", fmt.Errorf("dataset %s: --dataset-sessions needs a ShareGPT JSON array (conversations of from/value turns), not %s lines", d.Path, ds.Format)
	}
	script := make([]runner.ScriptedSession, len(ds.Entries))
	turns := 0
	for i, e := range ds.Entries {
		script[i] = runner.ScriptedSession{Index: e.Index, Lead: e.Messages[:len(e.Messages)-1], Turns: e.Turns}
		turns += len(e.Turns)
	}
	note := fmt.Sprintf("dataset %s (sharegpt): %d conversations (%d human turns) run whole as multi-turn sessions", d.Path, len(script), turns) + droppedNote(ds)
	return script, note, nil
}

// level writes how a cell loads the target in progress lines: "c=4", "2/s" for an uncapped
// open loop, "c=4 turn 2" for a multi-turn session's turn ("fresh 2" beside it).
func level(k servebench.CellKey) string {
	if k.Concurrency == 0 && k.RatePerSecond > 0 {
		return fmt.Sprintf("%g/s", k.RatePerSecond)
	}
	switch {
	case k.Turn > 0 && k.Scenario == stats.FreshScenario:
		return fmt.Sprintf("c=%d fresh %d", k.Concurrency, k.Turn)
	case k.Turn > 0:
		return fmt.Sprintf("c=%d turn %d", k.Concurrency, k.Turn)
	}
	return fmt.Sprintf("c=%d", k.Concurrency)
}

// loadWorkloads is the step before the run folder: a dataset, its conversations as sessions
// or a trace named by the plan is read and checked now, so that a bad file is refused before
// anything is created. The runner gets them in measure (attachWorkloads).
func (s *session) loadWorkloads() error {
	replay, note, err := loadDataset(s.plan.Dataset)
	if err != nil {
		return withCode(exitUsage, err)
	}
	script, snote, err := loadSessionScript(s.plan.Dataset)
	if err != nil {
		return withCode(exitUsage, err)
	}
	trace, tnote, err := loadTrace(s.plan.Trace, s.tg.prompts)
	if err != nil {
		return withCode(exitUsage, err)
	}
	// the files users replay (users.profiles dataset:PATH, trace:PATH), a resumed run's too
	users, err := workload.LoadUserFiles(s.plan.Users)
	if err != nil {
		return withCode(exitUsage, err)
	}
	s.attachWorkloads = func(rn *runner.Runner) {
		rn.UserFiles = users
		if replay != nil {
			rn.Dataset = replay
			fmt.Fprintln(s.e.stderr, note)
		}
		if script != nil {
			rn.SessionScript = script
			fmt.Fprintln(s.e.stderr, snote)
		}
		if trace != nil {
			rn.Trace = trace
			fmt.Fprintln(s.e.stderr, tnote)
		}
	}
	return nil
}
