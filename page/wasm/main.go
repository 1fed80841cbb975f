//go:build js && wasm

// Command wasm is the benchmark page's calculator: packages capacity, stats and frontier
// compiled to WebAssembly, so the page's threshold what-if, interpolated readings and frontier
// calculator come from the same Go code as servebench's own verdicts and reports. It registers one global object, servebench, whose
// functions take and return JSON strings:
//
//	servebench.reconsider({"use_case": UseCase, "ceiling": n, "cells": [CellResult], "resolution": r}) → capacity.Reconsidered
//	servebench.interpolate({"cells": [...], "context_tokens": c, "output_tokens": o, "concurrency": n, "statistic": "mean"}) → stats.PointReading
//	servebench.reconsider_users({"use_case": UseCase, "ceiling": n, "cells": [CellResult]}) → capacity.Reconsidered (capacity.ReconsiderUsers: the users' limit from the measured populations)
//	servebench.size({"capacity": [CapacityResult], "users": [UsersCapacity], "plan": SizingPlan, "declared_gpu": "2x H100", "cells": [...]}) → servebench.Sizing
//	servebench.vocabulary({}) → capacity.Vocabulary (the words of limit kinds, metrics and thresholds)
//	servebench.frontier({"cells": [...], "capacity": [...], "plan": SizingPlan, "declared_gpu": "4x B200", "target_per_user_tps": 50, "users": 1000})
//	    → {"analysis": frontier.Analysis, "answers": [frontier.Answer], "inputs": "..."} (the report's frontier, its readings, where the inputs came from)
//
// An error comes back as {"error": "..."}. Build it with go generate ./page (see page/gen.go).
package main

import (
	"encoding/json"
	"errors"
	"syscall/js"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/frontier"
	"github.com/servebench/servebench/stats"
)

type reconsiderIn struct {
	UseCase servebench.UseCase `json:"use_case"`
	Ceiling int                `json:"ceiling"`
	// Resolution is the run's capacity search's (CapacityResult.Resolution; 0: exact).
	Resolution float64                 `json:"resolution,omitempty"`
	Cells      []servebench.CellResult `json:"cells"`
}

type sizeIn struct {
	Capacity    []servebench.CapacityResult `json:"capacity"`
	Users       []servebench.UsersCapacity  `json:"users"`
	Plan        servebench.SizingPlan       `json:"plan"`
	DeclaredGPU string                      `json:"declared_gpu"`
	Cells       []servebench.CellResult     `json:"cells"`
}

type frontierIn struct {
	Cells            []servebench.CellResult     `json:"cells"`
	Capacity         []servebench.CapacityResult `json:"capacity"`
	Plan             servebench.SizingPlan       `json:"plan"`
	DeclaredGPU      string                      `json:"declared_gpu"`
	TargetPerUserTPS float64                     `json:"target_per_user_tps"`
	Users            int                         `json:"users"`
}

type frontierOut struct {
	Analysis frontier.Analysis `json:"analysis"`
	Answers  []frontier.Answer `json:"answers"`
	// Inputs says where each input came from, in the report's words (Hardware.Inputs).
	Inputs string `json:"inputs"`
}

type interpolateIn struct {
	Cells         []servebench.CellResult `json:"cells"`
	ContextTokens int                     `json:"context_tokens"`
	OutputTokens  int                     `json:"output_tokens"`
	Concurrency   int                     `json:"concurrency"`
	Statistic     servebench.Statistic    `json:"statistic"`
}

// call decodes the JSON argument into in, runs f and returns its result as JSON.
func call[T any](f func(T) (any, error)) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		var in T
		if len(args) != 1 || args[0].Type() != js.TypeString {
			return errJSON("expected one JSON string argument")
		}
		if err := json.Unmarshal([]byte(args[0].String()), &in); err != nil {
			return errJSON(err.Error())
		}
		out, err := f(in)
		if err != nil {
			return errJSON(err.Error())
		}
		b, err := json.Marshal(out)
		if err != nil {
			return errJSON(err.Error())
		}
		return string(b)
	})
}

func errJSON(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

func main() {
	api := js.Global().Get("Object").New()
	api.Set("reconsider", call(func(in reconsiderIn) (any, error) {
		return capacity.Reconsider(in.UseCase, in.Ceiling, in.Cells, in.Resolution), nil
	}))
	api.Set("reconsider_users", call(func(in reconsiderIn) (any, error) {
		return capacity.ReconsiderUsers(in.UseCase, in.Ceiling, in.Cells), nil
	}))
	api.Set("interpolate", call(func(in interpolateIn) (any, error) {
		return stats.Interpolate(in.Cells, in.ContextTokens, in.OutputTokens, in.Concurrency, in.Statistic)
	}))
	api.Set("size", call(func(in sizeIn) (any, error) {
		return capacity.Size(in.Capacity, capacity.SizingInput{Plan: in.Plan, DeclaredGPU: in.DeclaredGPU, Cells: in.Cells, Users: in.Users}), nil
	}))
	api.Set("frontier", call(func(in frontierIn) (any, error) {
		if in.TargetPerUserTPS <= 0 || in.Users <= 0 {
			return nil, errors.New("the target speed (tok/s per user) and the number of users must both be positive")
		}
		a := frontier.Analyze(frontier.Input{Cells: in.Cells, Capacity: in.Capacity, Plan: in.Plan, DeclaredGPU: in.DeclaredGPU})
		return frontierOut{Analysis: a, Answers: a.Answers(in.TargetPerUserTPS, in.Users), Inputs: "Inputs: " + a.Hardware.Inputs() + "; " + frontier.UsersDefinition("", a.UsersPerSlot) + "."}, nil
	}))
	api.Set("vocabulary", call(func(struct{}) (any, error) {
		return capacity.Words(), nil
	}))
	js.Global().Set("servebench", api)
	if cb := js.Global().Get("servebenchReady"); cb.Type() == js.TypeFunction {
		cb.Invoke()
	}
	select {} // keep the functions alive
}
