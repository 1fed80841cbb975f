// Package assets embeds the third-party browser code inlined into servebench's offline HTML
// report: the minified Apache ECharts build from the npm package pinned in web/package.json,
// with its licence files. Refresh with `cd web && npm ci && sh sync.sh`.
package assets

import (
	_ "embed"
	"strings"
)

// EChartsJS is dist/echarts.min.js of the pinned echarts npm package (Apache-2.0).
//
//go:embed echarts.min.js
var EChartsJS string

// EChartsLicense and EChartsNotice are the package's LICENSE and NOTICE files; ZRenderLicense
// is the BSD-3-Clause licence of zrender, which the minified build bundles.
var (
	//go:embed ECHARTS-LICENSE
	EChartsLicense string
	//go:embed ECHARTS-NOTICE
	EChartsNotice string
	//go:embed ZRENDER-LICENSE
	ZRenderLicense string
	//go:embed ECHARTS-VERSION
	echartsVersion string
)

// EChartsVersion is the npm version of the embedded build, e.g. "6.1.0".
func EChartsVersion() string { return strings.TrimSpace(echartsVersion) }
