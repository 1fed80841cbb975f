#!/usr/bin/env bash
# Builds, starts and stops a real Ollama serving a generated tiny model, for the end-to-end tests.
#
#   scripts/ollama.sh install                 build ollama v0.17.4 from the Go module proxy (skipped when built)
#   scripts/ollama.sh start --env-file FILE   serve on a free loopback port, import the tiny model and write
#                                             SERVEBENCH_OLLAMA_URL=... and SERVEBENCH_OLLAMA_MODEL=... to FILE
#   scripts/ollama.sh stop                    stop the server started by `start`
#
# Environment: SERVEBENCH_CACHE (default ~/.cache/servebench) holds the binary in ollama/;
# SERVEBENCH_OLLAMA_STATE (default /tmp/servebench-ollama) holds HOME, models, the PID file and the log;
# SERVEBENCH_OLLAMA_SIZE (tiny|small, default tiny) and SERVEBENCH_OLLAMA_PARALLEL (default 4).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
version=0.17.4
cache=${SERVEBENCH_CACHE:-$HOME/.cache/servebench}
bindir=$cache/ollama
bin=$bindir/ollama
state=${SERVEBENCH_OLLAMA_STATE:-/tmp/servebench-ollama}
pidfile=$state/ollama.pid
log=$state/ollama.log

die() { echo "ollama.sh: $*" >&2; exit 1; }
sudo_if() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

install() {
  if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$version"; then
    echo "ollama.sh: reusing $bin"; return 0
  fi
  command -v gcc >/dev/null && command -v g++ >/dev/null || die "gcc and g++ are needed to build Ollama (apt-get install build-essential)"
  # Go module zips leave out vendor/: nlohmann/json and stb come from Debian, miniaudio from our stub.
  if [ ! -f /usr/include/nlohmann/json_fwd.hpp ] || [ ! -f /usr/include/stb/stb_image.h ]; then
    echo "ollama.sh: installing nlohmann-json3-dev and libstb-dev (Debian packages)"
    sudo_if apt-get update -qq >/dev/null
    sudo_if env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nlohmann-json3-dev libstb-dev >/dev/null
  fi
  [ -f /usr/include/nlohmann/json_fwd.hpp ] || die "nlohmann/json_fwd.hpp not found; install nlohmann-json3-dev"
  mkdir -p "$bindir"
  echo "ollama.sh: building ollama v$version into $bindir (minutes; ~5 cold on 2 cores)"
  local t0; t0=$(date +%s)
  # -march=x86-64-v3: without it ggml's CPU kernels are baseline SSE2 and prefill is ~12x slower.
  CGO_ENABLED=1 \
  CGO_CPPFLAGS="-I/usr/include -I/usr/include/stb -I$repo/scripts/ollama-include" \
  CGO_CFLAGS="-O3 -march=x86-64-v3" CGO_CXXFLAGS="-O3 -march=x86-64-v3" \
  GOBIN="$bindir" GOFLAGS= \
    go install -ldflags "-X github.com/ollama/ollama/version.Version=$version" "github.com/ollama/ollama@v$version"
  echo "ollama.sh: built $bin in $(( $(date +%s) - t0 ))s"
}

free_port() {
  python3 - 2>/dev/null <<'PY' && return 0
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
  # No python: pick a random high port not in use.
  local p
  for _ in $(seq 50); do
    p=$(( 20000 + RANDOM % 30000 ))
    if ! (echo > "/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  die "no free loopback port found"
}

start() {
  local envfile=""
  while [ $# -gt 0 ]; do
    case $1 in
      --env-file) envfile=$2; shift 2 ;;
      --env-file=*) envfile=${1#*=}; shift ;;
      *) die "start: unknown argument $1 (usage: start --env-file FILE)" ;;
    esac
  done
  [ -n "$envfile" ] || die "start: --env-file FILE is required"
  [ -x "$bin" ] || die "no ollama at $bin; run: scripts/ollama.sh install"
  stop >/dev/null 2>&1 || true
  mkdir -p "$state/home" "$state/models" "$state/model"
  local port; port=$(free_port)
  local host=127.0.0.1:$port
  local t0; t0=$(date +%s.%N)
  HOME="$state/home" OLLAMA_HOST=$host OLLAMA_MODELS="$state/models" OLLAMA_KEEP_ALIVE=-1 \
    OLLAMA_NUM_PARALLEL=${SERVEBENCH_OLLAMA_PARALLEL:-4} OLLAMA_NOPRUNE=1 \
    nohup "$bin" serve >"$log" 2>&1 &
  echo $! >"$pidfile"
  local ready=""
  for _ in $(seq 300); do
    if curl -fsS "http://$host/api/version" >/dev/null 2>&1; then ready=1; break; fi
    kill -0 "$(cat "$pidfile")" 2>/dev/null || { tail -n 20 "$log" >&2; die "ollama serve exited; log: $log"; }
    sleep 0.1
  done
  [ -n "$ready" ] || { tail -n 20 "$log" >&2; die "ollama serve not ready after 30s; log: $log"; }
  local size=${SERVEBENCH_OLLAMA_SIZE:-tiny}
  (cd "$repo" && go run ./cmd/sb-tinymodel -size "$size" -seed 1 -o "$state/model/tiny.gguf")
  cat >"$state/model/Modelfile" <<'MF'
FROM ./tiny.gguf
TEMPLATE """{{ range .Messages }}{{ .Role }}: {{ .Content }}
{{ end }}assistant: """
PARAMETER num_ctx 8192
MF
  (cd "$state/model" && HOME="$state/home" OLLAMA_HOST=$host "$bin" create tiny -f Modelfile >"$state/create.log" 2>&1) \
    || { tail -n 20 "$log" >&2; cat "$state/create.log" >&2; die "ollama create failed; log: $log"; }
  {
    echo "SERVEBENCH_OLLAMA_URL=http://$host/v1"
    echo "SERVEBENCH_OLLAMA_MODEL=tiny"
  } >"$envfile"
  echo "ollama.sh: serving tiny ($size) at http://$host/v1 (pid $(cat "$pidfile"), log $log) after $(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || echo '?')s"
}

stop() {
  [ -f "$pidfile" ] || { echo "ollama.sh: not running (no $pidfile)"; return 0; }
  local pid; pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  echo "ollama.sh: stopped pid $pid"
}

case ${1:-} in
  install) shift; install "$@" ;;
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) die "usage: scripts/ollama.sh install | start --env-file FILE | stop" ;;
esac
