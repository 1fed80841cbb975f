#!/bin/sh
# sync.sh copies the pinned ECharts build (web/package.json, exact version) into the Go tree so
# that the offline HTML report can embed it with go:embed. Go cannot run npm at build time, so the
# copied files are committed; run this after changing the echarts version:
#
#   cd web && npm ci && sh sync.sh
set -eu
cd "$(dirname "$0")"
src=node_modules/echarts
dst=../report/html/assets
if [ ! -f "$src/dist/echarts.min.js" ]; then
	echo "sync.sh: $src/dist/echarts.min.js is missing: run 'npm ci' in web/ first" >&2
	exit 1
fi
mkdir -p "$dst"
cp "$src/dist/echarts.min.js" "$dst/echarts.min.js"
cp "$src/LICENSE" "$dst/ECHARTS-LICENSE"
cp "$src/NOTICE" "$dst/ECHARTS-NOTICE"
cp node_modules/zrender/LICENSE "$dst/ZRENDER-LICENSE"
node -p 'require("./node_modules/echarts/package.json").version' > "$dst/ECHARTS-VERSION"
echo "synced echarts $(cat "$dst/ECHARTS-VERSION") into $dst"
