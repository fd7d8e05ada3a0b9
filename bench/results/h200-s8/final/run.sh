#!/usr/bin/env bash
# Final measurement run on the lent GPU host (session 8): GPU suite + CUDA peer, GEMM tile sweep,
# 16-core CPU suite + CPU peer, CPU profiles, demo, GPU tests. Copied into .device/ after staging.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"; exec > >(tee "$out/all.log") 2>&1
t0=$(date +%s); el() { echo "[+$(( $(date +%s) - t0 ))s] $*"; }
DEADLINE=${DEADLINE:-540}
lim() { local r=$(( DEADLINE - ($(date +%s) - t0) )); [ "$r" -lt 1 ] && r=1; [ "$r" -lt "$1" ] && echo "$r" || echo "$1"; }
for f in .device/gl/*.deb; do dpkg -x "$f" /; done; ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; [ -f "$icd" ] && export VK_DRIVER_FILES=$icd
(cd .device && tar -xJf b.tar.xz) || exit 1
B=$PWD/.device/b; export B WEBTENSOR_WEBGPU_LIB=$B/libwebgpu.so CI=true
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__)'
el devicequery; timeout 30 "$B/devicequery" -json > "$out/devicequery.json"
el gpu-bench; timeout "$(lim 120)" "$B/bench" -device gpu -threads 16 -min-time 300ms -min-samples 3 -json "$out/webtensor-gpu.json" 2>&1 | grep -v '^ *$'
el peers-cuda; PYTHONUNBUFFERED=1 timeout "$(lim 70)" python3 bench/peers/peers.py --cuda --min-time 0.3 --min-samples 3 --json "$out/peers-cuda.json" 2>&1 | grep -v '^ *$' | tail -60
el tiles; TILE_T=20 AUTOTUNE_T=50 OUT=$out timeout "$(lim 100)" bash bench/gpu_tiles.sh 2>&1 | tail -60
CF='^(matmul/(1024|2048)|conv2d/.*|mlp-step/.*|cnn-step/.*|add/16M|relu/16M|sum/16M|softmax/4096x1024|adam/10M)$'
el cpu-bench; timeout "$(lim 110)" "$B/bench" -device cpu -threads 1,16 -filter "$CF" -min-time 300ms -min-samples 3 -json "$out/webtensor-cpu.json" 2>&1 | grep -v '^ *$'
el test-cpu; (cd backend/cpu && timeout "$(lim 60)" "$B/backend_cpu.test" -test.count=1 -test.run 'GEMM|Winograd|Conv2D|Parallel|Worker|Chunk|MatMul|ReLUGrad') > "$out/tests-backend_cpu.log" 2>&1; echo "  rc=$?"; grep -E '^(--- FAIL|FAIL|panic|ok|PASS)' "$out/tests-backend_cpu.log" | head
el peers-cpu; PYTHONUNBUFFERED=1 timeout "$(lim 80)" python3 bench/peers/peers.py --threads 1,16 --filter "$CF" --min-time 0.3 --min-samples 3 --json "$out/peers-cpu.json" 2>&1 | grep -v '^ *$' | tail -40
el cpu-prof; timeout "$(lim 30)" "$B/bench" -device cpu -threads 16 -filter '^(matmul/2048|mlp-step/.*|conv2d/n8-256to256-14x14-k3)$' -min-time 1s -min-samples 3 -cpuprofile "$out/cpu16.pprof" 2>&1 | grep -v '^ *$'
el cpu-prof1; timeout "$(lim 20)" "$B/bench" -device cpu -threads 1 -filter '^matmul/2048$' -min-time 1s -min-samples 3 -cpuprofile "$out/cpu1.pprof" 2>&1 | grep -v '^ *$'
el demo; timeout "$(lim 40)" "$B/demo" 2>&1 | tail -6
el tests; while read -r p n; do
  case $p in backend/cpu) continue;; *) re='MatMul|Warp|Tile|Autotune|TestConformance/.*/kernels/binary';; esac
  el "test $p ($re)"; (cd "$p" && timeout "$(lim 150)" "$B/$n" -test.count=1 -test.run "$re") > "$out/tests-${p//\//_}.log" 2>&1; echo "  rc=$?"
  grep -E '^(--- FAIL|FAIL|panic|ok|PASS)' "$out/tests-${p//\//_}.log" | head -20
done < "$B/manifest"
el done
