#!/usr/bin/env bash
# Stages the benchmark suite for a lent NVIDIA machine (see ../shared/gpu/README.md), so that ONE call of
# the device tool measures webtensor on Vulkan against PyTorch CUDA.
#
# 1. Here, from the project root:   bench/gpu.sh
#    It fills .device/ (ignored by git) with the Vulkan/EGL loader packages, the WebGPU library (from
#    WEBTENSOR_WEBGPU_LIB or the cache `make deps` fills), the bench binary built for linux/amd64, and
#    .device/bench.sh, the script the machine runs.
# 2. The device tool:   run  command: "bash .device/bench.sh"   carry: [".device"]   timeout_s: 600
#    bench.sh unpacks the loaders, points Dawn at the NVIDIA Vulkan driver, runs our bench on every hardware
#    WebGPU adapter (-device gpu) and bench/peers/peers.py --cuda (SGEMM with TF32 off, HGEMM, elementwise
#    against a device-to-device copy, the training steps), and writes $OUT/webtensor-gpu.json and
#    $OUT/peers-cuda.json, printing both as well.
# 3. Here, with the files the tool fetched (files_at):
#    cp FILES_AT/*.json bench/results/ && go run ./bench/report
#    which adds the GPU table and the GPU acceptance ratios to BENCHMARKS.md.
# BENCH_ARGS adds flags to our bench on the device (default: -min-time 500ms).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
export PATH=$PATH:/usr/local/go/bin
rm -rf .device && mkdir -p .device/gl

# Vulkan and EGL loaders as x86-64 Debian packages; the device has the NVIDIA driver but no loader.
lists=$(mktemp -d); mkdir -p "$lists/partial"; trap 'rm -rf "$lists"' EXIT
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
apt-get $o update -qq >/dev/null 2>&1
(cd .device/gl && apt-get $o download -qq libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1)

lib=${WEBTENSOR_WEBGPU_LIB:-}
[ -n "$lib" ] || lib=$(find "${XDG_CACHE_HOME:-$HOME/.cache}/webtensor" -name 'libwebgpu*.so' -o -name 'libwgpu*.so' 2>/dev/null | head -1)
[ -f "$lib" ] || { echo "gpu.sh: no WebGPU library found; run make deps or set WEBTENSOR_WEBGPU_LIB" >&2; exit 1; }
cp "$lib" .device/

# The device has no Go: build here. cgo stays on (the WebGPU binding needs it); the binary dlopens Dawn.
CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -trimpath -o .device/webtensor-bench ./bench

cat > .device/bench.sh <<SCRIPT
#!/usr/bin/env bash
# Runs on the lent machine from the project root (written by bench/gpu.sh).
set -uo pipefail
for f in .device/gl/*.deb; do dpkg -x "\$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "\$icd" ] && export VK_DRIVER_FILES=\$icd
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "\$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=\$egl
export WEBTENSOR_WEBGPU_LIB=\$PWD/.device/$(basename "$lib")
out=\${OUT:-/tmp/bench-out}; mkdir -p "\$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
rc=0
.device/webtensor-bench -device gpu -threads \$(nproc) ${BENCH_ARGS:--min-time 500ms} -json "\$out/webtensor-gpu.json" || rc=1
python3 bench/peers/peers.py --cuda --min-time 0.5 --json "\$out/peers-cuda.json" || rc=1
for f in "\$out"/webtensor-gpu.json "\$out"/peers-cuda.json; do echo "=== \$f"; cat "\$f" 2>/dev/null; done
exit \$rc
SCRIPT
chmod +x .device/bench.sh
du -sh .device | awk '{print "gpu.sh: staged " $1 " in .device (the device tool carries at most 64 MiB)"}'
echo 'gpu.sh: now call the device tool: run command "bash .device/bench.sh" with carry [".device"]'
