#!/usr/bin/env bash
# GPU telemetry check on a machine with an NVIDIA GPU (never run by CI or the tests).
#
# Loads the GPU from a PTX kernel through the CUDA driver API (gpuload.c: the driver compiles the
# PTX, no CUDA toolkit needed) in steps, 6 s on and 4 s off, while servebench runs the same small
# plan against its simulated engine with --gpu none, nvml and nvidia-smi, and nvidia-smi samples
# the GPU on its own every 200 ms. Compare the runs' CPU time (what each telemetry source costs),
# the cells' power and energy (results.json, cells.jsonl: NVML's energy counter against the
# integral of sampled power), and smi.csv (power.draw against power.draw.instant).
#
# Build here (needs gcc, and cgo for NVML), then copy this folder to the GPU machine:
#   gcc -O2 -o scripts/gpu-check/gpuload scripts/gpu-check/gpuload.c -ldl
#   CGO_ENABLED=1 go build -tags nvml -o scripts/gpu-check/servebench ./cmd/servebench
#   scripts/gpu-check/run.sh OUT_DIR
#
# What it showed on one H100 80GB HBM3 (driver 580, 16 cores), 70 s runs (--max-time 60s):
# whole-process CPU 3.3 s with --gpu none, 4.2 s with nvml, 3.3 s with nvidia-smi looping
# (10.3 s when nvidia-smi was started for every reading: 21 ms of CPU each); power.draw is a
# 1 s average (equal to power.draw.average; power.draw.instant steps at once between 120 and
# 325 W); mean power per cell within 1% between the nvml and nvidia-smi runs; sampled power's
# integral within -2.1% to +2.7% of the energy counter over 17-31 s windows.
set -uo pipefail
cd "$(dirname "$0")"
OUT=${1:?usage: run.sh OUT_DIR}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$OUT/gpu.csv"
nvidia-smi --query-gpu=timestamp,power.draw,power.draw.instant,utilization.gpu,clocks.sm \
	--format=csv,nounits -lms 200 > "$OUT/smi.csv" 2>&1 &
SMI=$!
trap 'kill $SMI 2>/dev/null' EXIT
PLAN=(--sim-profile h200-glm47-flash --contexts 1k,8k --concurrency 1,4 --use-cases none --scenarios none --max-time 60s --quiet)
TIMEFORMAT='%R s wall, %U s user, %S s sys'
for g in none nvml nvidia-smi; do
	sleep 2
	./gpuload 71 6000 4000 > "$OUT/load-$g.txt" 2>&1 &
	L=$!
	{ time ./servebench run "${PLAN[@]}" --gpu "$g" --out "$OUT/run-$g" > "$OUT/run-$g.log" 2>&1; } 2> "$OUT/time-$g.txt"
	wait $L
	echo "--gpu $g: $(cat "$OUT/time-$g.txt")"
done
