#!/usr/bin/env bash
# Times the GEMM tiles of issue 15 one by one on a GPU (WEBTENSOR_MATMUL_TILE forces each), then the
# autotuner's own choice, at the sizes: matmul 1024 and 4096, bmm 64×256³. Each run prints the
# bench table and, with -profile, the kernel every case ran (its name shows the tile: "matmul-tiled WX WY
# TM TN BK [db] [sw] [wp] [pf] …", wp = warp layout, pf = register prefetch), so a forced name that
# did not take (unknown, or not fitting the adapter) shows as a different kernel.
#
# On the lent GPU machine, after ../shared/gpu/stage.sh staged .device/ here (bench/gpu_tiles.sh travels
# with the work tree), from the project root:
#   STEPS=devicequery bash .device/run.sh; B=$PWD/.device/b bash bench/gpu_tiles.sh
# (run.sh unpacks the loaders and .device/b; without it this script does both itself when it finds the
# NVIDIA ICD, i.e. only on the GPU machine). About 60 s on an H200 (9 bench runs of 3 cases, ~5 s each,
# and the autotuner's run, which tunes 3 shape classes among ~38 candidates), under 90 s; each run is
# bounded by TILE_T seconds (default 25).
# Here, as a smoke test on a software adapter:
#   B=/tmp/bb QUICK=1 DEVICE=webgpu:0 bash bench/gpu_tiles.sh     (B holds a bench binary: go build -o $B/bench ./bench)
# Knobs: B (folder with the bench binary), DEVICE (default gpu), QUICK=1 (-quick and its sizes),
# FILTER (case regex), TILES (space-separated tile names, default below; empty: none), TILE_T and
# AUTOTUNE_T (seconds per forced run, default 25, and for the autotuner's run, default 60; a software
# adapter compiles each candidate for seconds, so tuning there takes minutes), BENCH_ARGS (more flags),
# OUT (if set, the log is also written to $OUT/gpu_tiles.log).
set -uo pipefail
root=$(git rev-parse --show-toplevel 2>/dev/null || pwd); cd "$root"
B=${B:-$PWD/.device/b}
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$icd" ]; then # the GPU machine: set up as .device/run.sh does, unless it already has
  [ -x "$B/bench" ] || [ ! -f .device/b.tar.xz ] || (cd .device && tar -xJf b.tar.xz)
  if ! ldconfig -p | grep -q libvulkan.so.1; then for f in .device/gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
  export VK_DRIVER_FILES=$icd
  egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; [ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
  [ -f "$B/libwebgpu.so" ] && export WEBTENSOR_WEBGPU_LIB=$B/libwebgpu.so
fi
[ -x "$B/bench" ] || { echo "gpu_tiles.sh: no bench binary at $B/bench" >&2; exit 1; }
[ -n "${OUT:-}" ] && { mkdir -p "$OUT"; exec > >(tee "$OUT/gpu_tiles.log") 2>&1; }

device=${DEVICE:-gpu}
quick=()
filter=${FILTER:-'^(matmul/(1024|4096)|bmm/64x256)$'}
if [ "${QUICK:-0}" = 1 ]; then quick=(-quick); filter=${FILTER:-'^(matmul/(64|128)|bmm/4x32)$'}; fi
# Baselines first (the 20:58 and 15:28 winners, and the first with prefetch), then the warp-tiled
# variants of session 8 and one without its prefetch, to separate the layout from the prefetch.
tiles=${TILES-"tiled16x8-8x4-k16 tiled16x8-8x4-k16-prefetch tiled16x16-8x4-k16
tiled16x8-8x4-k16-prefetch-warp tiled16x8-8x4-k16-warp tiled16x16-8x4-k16-prefetch-warp
tiled16x16-8x8-k8-double-warp tiled16x16-4x4-k16-prefetch-warp"}
t0=$(date +%s)
run() { # run SECONDS NAME ENV…: one bench run under the given environment
  local limit=$1 name=$2; shift 2
  echo "=== $name [+$(( $(date +%s) - t0 ))s]"
  env "$@" timeout "$limit" "$B/bench" -device "$device" -threads "$(nproc)" "${quick[@]}" -filter "$filter" \
    -min-time 300ms -min-samples 3 -profile ${BENCH_ARGS:-} 2>&1 | grep -v '^ *$' | tee "$log"
  echo "rc=${PIPESTATUS[0]}"
  # The summary: this run's result rows (case device T median best unit samples) under its name.
  awk -v n="$name" '$1 ~ /^(matmul|bmm)\// && NF >= 7 {printf "%-36s %-14s %12s %12s %s\n", n, $1, $4, $5, $6}' "$log" >> "$summary"
}
log=$(mktemp); summary=$(mktemp); trap 'rm -f "$log" "$summary"' EXIT
for t in $tiles; do
  run "${TILE_T:-25}" "$t" WEBTENSOR_MATMUL_TILE="$t" WEBTENSOR_AUTOTUNE=0
done
# The autotuner among every candidate (a fresh table, so it tunes each class now), then its choices.
dir=$(mktemp -d)
run "${AUTOTUNE_T:-60}" autotune WEBTENSOR_AUTOTUNE=1 WEBTENSOR_AUTOTUNE_DIR="$dir"
cat "$dir"/*.json 2>/dev/null; echo
rm -rf "$dir"
echo "=== summary (medians and best of each run)"
printf "%-36s %-14s %12s %12s %s\n" tile case median best unit
cat "$summary"
echo "=== done in $(( $(date +%s) - t0 ))s"
