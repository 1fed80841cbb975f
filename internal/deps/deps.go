//go:build deps

// Package deps pins the project's third-party modules in go.mod while the packages that use them
// are written in parallel; it is never built (the "deps" tag is never set).
package deps

import (
	_ "github.com/HdrHistogram/hdrhistogram-go"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/chromedp/cdproto/page"
	_ "github.com/chromedp/chromedp"
	_ "github.com/go-echarts/go-echarts/v2/charts"
	_ "github.com/goccy/go-yaml"
	_ "github.com/prometheus/client_model/go"
	_ "github.com/prometheus/common/expfmt"
	_ "github.com/spf13/cobra"
	_ "github.com/tiktoken-go/tokenizer"
	_ "github.com/vbauerster/mpb/v8"
	_ "gonum.org/v1/gonum/stat"
	_ "modernc.org/sqlite"
)
