package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/stats"
)

// vllmBench measures a server the way `vllm bench serve --backend openai-chat
// --dataset-name random --max-concurrency N --save-result --save-detailed` does
// (vllm-project/vllm, vllm/benchmarks/serve.py and vllm/benchmarks/lib/endpoint_request_func.py
// at commit 02cfb534 / 009e6d4a), and writes its result file, so servebench import can be
// tested against a server servebench measures too. It is a test program, not vllm: it keeps
// vllm's definitions and file format, not its code. What it keeps:
//
//   - every prompt is created up front and sent with request rate inf: at most N in flight
//     (vllm's semaphore), the next one sent when one ends;
//   - a request's clock starts just before it is sent; each SSE message (other than [DONE]) is
//     stamped when read. TTFT is the first message whose "choices" is not empty: the chat
//     role-only chunk counts. ITL is the list of gaps between successive messages with
//     choices; latency ends at the last message with choices (the usage chunk does not count);
//     output tokens and prompt length come from usage;
//   - duration is from before the first send to after the last request ended; the throughputs
//     divide the successful requests' tokens by it; TPOT = (latency − TTFT) / (output − 1);
//     mean, median, std (population) and percentiles by numpy's linear method.
//
// Beside vllm's figures it returns, per request, the times of the first content token so a
// test can check the definitions' difference exactly on the same stream.
type vllmBench struct {
	base        string // http://host:port (no /v1)
	model       string
	prompts     []string
	promptLen   int // the dataset's prompt length (vllm's prompt_len before usage replaces it)
	outputLen   int
	concurrency int
}

// vllmOutput is vllm's RequestFuncOutput, plus the first content chunk's time.
type vllmOutput struct {
	success      bool
	err          string
	ttft         float64
	itl          []float64
	latency      float64
	outputTokens int
	promptLen    int
	startTime    float64
	firstContent float64 // servebench's TTFT on the same stream: first non-empty content delta
}

func (b *vllmBench) request(client *http.Client, origin time.Time, prompt string) vllmOutput {
	out := vllmOutput{promptLen: b.promptLen}
	body, _ := json.Marshal(map[string]any{
		"model":                 b.model,
		"messages":              []map[string]any{{"role": "user", "content": []map[string]string{{"type": "text", "text": prompt}}}},
		"max_completion_tokens": b.outputLen,
		"stream":                true,
		"stream_options":        map[string]bool{"include_usage": true},
		"ignore_eos":            true, // random dataset with an OpenAI-compatible backend
	})
	st := time.Now()
	out.startTime = st.Sub(origin).Seconds()
	resp, err := client.Post(b.base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		out.err = err.Error()
		return out
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		out.err = resp.Status
		return out
	}
	mostRecent := st
	first := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		chunk := strings.TrimPrefix(line, "data: ")
		if chunk == "[DONE]" {
			continue
		}
		ts := time.Now()
		var data struct {
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     *int `json:"prompt_tokens"`
				CompletionTokens int  `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(chunk), &data); err != nil {
			out.err = err.Error()
			return out
		}
		switch {
		case len(data.Choices) > 0:
			if !first {
				first = true
				out.ttft = ts.Sub(st).Seconds()
			} else {
				out.itl = append(out.itl, ts.Sub(mostRecent).Seconds())
			}
			if c := data.Choices[0].Delta.Content; c != nil && *c != "" && out.firstContent == 0 {
				out.firstContent = ts.Sub(st).Seconds()
			}
			mostRecent = ts
		case data.Usage != nil:
			out.outputTokens = data.Usage.CompletionTokens
			if data.Usage.PromptTokens != nil {
				out.promptLen = *data.Usage.PromptTokens
			}
		}
	}
	if first {
		out.success = true
	} else {
		out.err = "Never received a valid chunk to calculate TTFT.This response will be marked as failed!"
	}
	out.latency = mostRecent.Sub(st).Seconds()
	return out
}

// run measures and returns vllm's result_json (with --save-detailed's arrays) and the outputs.
func (b *vllmBench) run(t *testing.T) (map[string]any, []vllmOutput) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{DialContext: simtest.Dial}}
	defer client.CloseIdleConnections()
	outs := make([]vllmOutput, len(b.prompts))
	sem := make(chan struct{}, b.concurrency)
	var wg sync.WaitGroup
	origin := time.Now()
	for i, p := range b.prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			outs[i] = b.request(client, origin, p)
		}()
	}
	wg.Wait()
	dur := time.Since(origin).Seconds()

	var ttfts, tpots, itls, e2els []float64
	completed, failed, totalIn, totalOut := 0, 0, 0, 0
	var (
		inLens, outLens []int
		allTTFT, allLat []float64
		allITL          [][]float64
		starts          []float64
		errs            []string
	)
	for _, o := range outs {
		inLens, allTTFT, allLat, starts, errs = append(inLens, o.promptLen), append(allTTFT, o.ttft), append(allLat, o.latency), append(starts, o.startTime), append(errs, o.err)
		allITL = append(allITL, append([]float64{}, o.itl...))
		if !o.success {
			failed++
			outLens = append(outLens, 0)
			continue
		}
		completed++
		outLens = append(outLens, o.outputTokens)
		totalIn += o.promptLen
		totalOut += o.outputTokens
		if o.outputTokens > 1 {
			tpots = append(tpots, (o.latency-o.ttft)/float64(o.outputTokens-1))
		}
		itls = append(itls, o.itl...)
		ttfts = append(ttfts, o.ttft)
		e2els = append(e2els, o.latency)
	}
	res := map[string]any{
		"date": origin.UTC().Format("20060102-150405"), "endpoint_type": "openai-chat", "backend": "openai-chat", "label": nil,
		"model_id": b.model, "tokenizer_id": b.model, "num_prompts": len(b.prompts),
		"request_rate": "inf", "burstiness": 1.0, "max_concurrency": b.concurrency,
		"duration": dur, "completed": completed, "failed": failed,
		"total_input_tokens": totalIn, "total_output_tokens": totalOut,
		"request_throughput": float64(completed) / dur, "request_goodput": nil,
		"output_throughput": float64(totalOut) / dur, "total_token_throughput": float64(totalIn+totalOut) / dur,
		"input_lens": inLens, "output_lens": outLens, "ttfts": allTTFT, "itls": allITL, "latencies": allLat,
		"start_times": starts, "errors": errs, "rtfx": 0.0,
	}
	// process_one_metric for the default --percentile-metrics ttft,tpot,itl and --metric-percentiles 99
	for key, v := range map[string][]float64{"ttft": ttfts, "tpot": tpots, "itl": itls} {
		s := slices.Clone(v)
		slices.Sort(s)
		res["mean_"+key+"_ms"] = meanOf(s) * 1000
		res["median_"+key+"_ms"] = stats.Percentile(s, 0.5) * 1000
		res["std_"+key+"_ms"] = popStd(s) * 1000
		res["p99_"+key+"_ms"] = stats.Percentile(s, 0.99) * 1000
	}
	return res, outs
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// popStd is numpy's np.std: the population standard deviation.
func popStd(v []float64) float64 {
	m := meanOf(v)
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	if len(v) == 0 {
		return 0
	}
	return math.Sqrt(ss / float64(len(v)))
}

// writeJSON writes v as vllm does (json.dump, one object).
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstModel asks the server for its first model, as vllm does without --model.
func firstModel(t *testing.T, base string) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: simtest.Dial}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || len(l.Data) == 0 {
		t.Fatalf("/v1/models: %v %+v", err, l)
	}
	return l.Data[0].ID
}

// simPrompt is a prompt of exactly words tokens for the simulator's tokenizer (every run of
// letters and digits is one token), unique from its first token so no two share a cached
// prefix, as vllm's random dataset's prompts do not.
func simPrompt(i, words int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "p%d", i)
	for j := 1; j < words; j++ {
		b.WriteString(" w")
		b.WriteString(fmt.Sprint(j % 97))
	}
	return b.String()
}
