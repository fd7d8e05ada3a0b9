// Package wgpu is the WebGPU backend: it runs the kernels as WGSL compute
// shaders through the standard C API webgpu.h, using whichever
// implementation (Dawn, wgpu-native) it finds at run time.
//
// The library is opened with dlopen, so the module builds and runs without
// it; the backend then reports hal.ErrLibraryNotFound. The search order is:
//
//  1. the file named by the environment variable WEBTENSOR_WEBGPU_LIB;
//  2. the cache directory that `make deps` fills,
//     $XDG_CACHE_HOME/webtensor/webgpu (os.UserCacheDir);
//  3. the system loader path, under the names libwebgpu_dawn,
//     libwgpu_native and libwebgpu_wrapper (.so, .dylib or .dll).
//
// The working directory is never searched.
//
// On Linux without a display (neither DISPLAY nor WAYLAND_DISPLAY set), the
// backend sets EGL_PLATFORM=surfaceless before loading, unless the user set
// EGL_PLATFORM, so that the OpenGL ES adapter works headless.
//
// Importing the package registers the backend under the name "webgpu".
//
// # Dtypes
//
// The backend holds Float32 and Int32 everywhere and Float16 on adapters
// with shader-f16. It does not hold Int64 or Float64: WGSL has no 64-bit
// types, so Capabilities leaves them out of every kernel. Package tensor
// narrows Int64 data moved to a WebGPU device to Int32, with an error for
// a value out of the int32 range (see "Int64 on WebGPU" in package
// tensor); the backend itself never sees an Int64 view.
//
// # Layout
//
// The backend is a runtime and kernel families on top of it. From the
// bottom:
//
//   - internal/webgpu is the thin cgo binding of webgpu.h and, under
//     GOOS=js GOARCH=wasm, its browser twin over syscall/js and the page's
//     navigator.gpu (browser.go): the same types and methods, chosen by
//     build tags, so that everything above it (internal/gpu,
//     internal/device, the kernels, fusion, the conformance tests) is one
//     code for both. See "In the browser" below.
//   - internal/gpu is the process's WebGPU: loading the library (and the
//     lavapipe that `make deps` installs), the instance and its adapters,
//     and the one locked thread every native call runs on (gpu.Run,
//     gpu.Post). library.go and env.go give its names to this package's
//     users.
//   - internal/device is the device runtime: the native device, memory
//     and the buffer pool, the recorder that batches dispatches into
//     command buffers, the kernel cache, the fault word and device loss.
//     The kernel families reach it through a narrow API: Alloc, Retire
//     and Recycle, Own (a hal.Buffer's Allocation), Kernel (compile once
//     per name), Post (record a dispatch), BindSize, FaultWord, Fail,
//     LostErr, Stats. It sees fusion only through SetQuiesce.
//   - This package's Device (device.go) is the hal.Device: the runtime,
//     the kernel families and fusion composed. Beside it are what every
//     kernel family shares: the WGSL templates and the launch vocabulary
//     (kernels.go: render, grid, dispatch and the params encoder), the
//     checked views a kernel binds and the capabilities (views.go), and
//     windows for operands past one binding (chunk.go).
//   - The kernel families, each a file (or a few) over one template of
//     package shaders: elementwise (elementwise*.go, chunk_elementwise.go),
//     reduce (reduce.go, chunk_reduce.go), GEMM (gemm.go, then matmul.go
//     and matmul_tiled.go, autotune.go, chunk_matmul.go), Conv2D
//     (conv2d.go; the long K of few outputs, a weight gradient's, in
//     slices side by side; on software adapters Im2Col and a batched
//     MatMul, conv2d_gemm.go), the indexing and windowed kernels (window.go, index.go,
//     conv.go, pool2d.go, sample.go), softmax (softmax.go), the
//     optimizer steps (step.go), and sort and the scans (sort.go,
//     scan.go).
//   - Fusion (fusion.go, fusion_render.go): a fusionPlanner that gathers
//     elementwise launches, and a producer (GEMM or Conv2D) before them,
//     into groups; each group is planned as data (planFused) and rendered
//     by shaders/fused.wgsl and shaders/fused_body.wgsl, like every other
//     kernel.
//
// # In the browser
//
// Built with GOOS=js GOARCH=wasm, the backend runs on the page's WebGPU:
// "webgpu:0" is the adapter navigator.gpu.requestAdapter gives, and, when
// the program's environment (go.env in wasm_exec.js) sets
// WEBTENSOR_WEBGPU_FALLBACK=1, "webgpu:1" is its fallback adapter
// (SwiftShader in Chromium) unless the two are the same. Devices are
// created with the adapter's limits and the wanted features, as natively.
//
// Promises are awaited by parking the calling goroutine, so every call
// that waits for the GPU (reading a tensor, Sync, opening a device) blocks
// its goroutine only, and must never run inside a js.FuncOf callback (an
// event handler): the callback holds the browser's event loop, the promise
// never settles, and the page hangs. Start a goroutine from the handler.
// Errors and device loss come back as the same typed errors as natively;
// error scopes are pushed and awaited only by the calls that check them.
// `make test-browser` runs the conformance suite in headless Chromium.
//
// A MatMul's way through the GEMM family is written down at the top of
// gemm.go: gemm.plan is the one place that chooses the variant.
//
// # MatMul autotuning
//
// On hardware adapters (any adapter type but "cpu") MatMul variants are
// autotuned by default: the first MatMul of a shape class (dtype, batched
// or not, the power-of-two ceilings of M, N and K) times a handful of
// candidate tiles at its size on the adapter, so that one call takes from
// milliseconds to about a second longer; the winner is cached per adapter
// in os.UserCacheDir()/webtensor/autotune (WEBTENSOR_AUTOTUNE_DIR
// overrides it) and later calls and processes just read it. Software
// adapters (llvmpipe, lavapipe) and tests (testing.Testing) use the
// heuristic unless WEBTENSOR_AUTOTUNE=1; WEBTENSOR_AUTOTUNE=0
// turns tuning and cached choices off everywhere. Without a tuned choice,
// a GPU gets the largest tile that still launches about two workgroups
// per compute unit (132 assumed: WebGPU does not expose the count), and
// split-K when even the smallest tile gives too few.
//
// WEBTENSOR_MATMUL_TILE forces every MatMul with M, N > 1 onto one tiled
// variant, named as AutotuneMatMul reports its choice (for example
// "tiled16x16-8x8-k16-double-swizzle", the two-stage swizzled 128×128
// tile), so that a GPU run compares the candidates row by row; a name
// that is unknown or does not fit the adapter is ignored.
//
// Four candidates have the warp layout ("-warp" in the name; issue 15,
// session 8): each 32 consecutive invocations, a warp on NVIDIA, compute a
// compact 8-by-4 patch of the workgroup's invocation grid rather than two
// rows of 16, so that per k step a warp reads 8 neighbouring vec4s of the
// b tile (one 128-byte shared-memory wavefront) and 4 broadcast vec4s of
// the a tile, the warp tiling of the fast CUDA SGEMMs. They are 64×64 and
// 128×64 blocks of 8×4 per invocation with register prefetch (the H200's
// winners, warp-tiled), 128×128 of 8×8 two-staged at k8, and 64×64 of
// 4×4 over 256 invocations for short K (the 64×256³ bmm). bench/gpu_tiles.sh
// times them one by one against the earlier winners and the autotuner.
// Software adapters leave them out of autotuning: their invocations are
// SIMD lanes, not warps.
//
// # Softmax
//
// On hardware adapters a softmax row of up to 8,192 elements (2,048 when
// its rows are not 16-byte aligned whole vec4s) runs in the "warp" mode:
// 32 invocations per row (a warp on NVIDIA; 64, 128 or 256 for longer
// rows, so that each holds at most 8 vec4s), several rows per workgroup,
// the row read once into unrolled registers with coalesced vec4 loads,
// folded by subgroupMax and subgroupAdd where the device has subgroups,
// and written once. Four environment knobs choose among the modes on a
// GPU, for measuring them side by side (bench -filter softmax):
//
//   - WEBTENSOR_SOFTMAX_MODE=warp|rows|regs|full (or auto, the default):
//     the first mode to try, in the automatic order warp, rows (several
//     rows per workgroup, 32 or 64 lanes each, registers in an array),
//     regs (one row per workgroup in registers), full (one row per
//     workgroup, read twice); a shape a mode does not take falls to the
//     next;
//   - WEBTENSOR_SOFTMAX_LANES=1|2|…|256: the warp mode's lanes per row
//     (rows of at most 16 units per lane take it);
//   - WEBTENSOR_SOFTMAX_WG=32|64|…|1024: the warp mode's workgroup size
//     (default 256, within the device's limits; subgroups fold rows there
//     only where a probe at that size finds them in aligned runs);
//   - WEBTENSOR_SOFTMAX_EXP=fast|exact: the warp mode's e^x, its own
//     branch-free one (default) or the kernels' shared exp_f.
//
// A bad value fails every Softmax with hal.ErrInvalid naming the variable.
// Software adapters (llvmpipe, lavapipe: CPUs running the shader) take
// their own path, where a workgroup barrier and each element's
// arithmetic cost more than the bytes: 8 invocations per row (one SIMD
// group there, so few barriers), and for float32 softmax the "sweep"
// mode, three passes over a row in cache with one exponential per
// element and vec4 loads where rows are aligned (4,096×1,024: 0.04 →
// 0.5 GB/s on lavapipe, about 3× TensorFlow.js's WebGPU backend on the
// same adapter); log_softmax and float16 read the row online. Rows too
// long for llvmpipe's loop cap are split into segments.
//
// # Layer norm
//
// LayerNorm (hal's optional layer_norm kernel, which tensor.LayerNorm
// takes over its trailing axes collapsed into one) is one row kernel,
// shaders/layernorm.wgsl, laid out as softmax's one-row modes: a row per
// workgroup, 8 invocations on software adapters and about four elements
// per invocation on GPUs (softmaxPlan), reading the row three times in
// cache (Σx, Σ(x − mean)² for a two-pass variance, the outputs), as vec4s
// where float32 rows are 16-byte aligned whole vec4s, with subgroupAdd
// folds where the device has subgroups. Rows past llvmpipe's loop cap,
// and few long rows on a GPU, take two dispatches: each segment's sum and
// centered squares, merged (Chan et al.) by every segment of the second.
// Strided rows read any strides; float16 computes in float32 and rounds
// once. The hardware adapters' several-rows-per-workgroup mode that
// softmax has is not there yet.
//
// # Elements per invocation
//
// The contiguous path of the elementwise and fused kernels computes 4
// elements per invocation (one vec4 load per operand, one vec4 store).
// WEBTENSOR_EW_LANES=8, read when a device opens, makes it 8: two vec4s
// per operand a workgroup size apart, both loaded before the arithmetic.
// Both are tested on every adapter; which one a GPU runs faster is for a
// benchmark there to say (EWLanesEnv), so the default stays 4. Any other
// value fails Open with hal.ErrInvalid.
//
// A length that is a multiple of 4 gets a kernel that stores whole vec4s
// only; other lengths add a tail of single-component stores for the last
// partial vec4. They are two kernels because the tail's mere presence,
// never taken, slowed every store on llvmpipe by 1.3× and on lavapipe by
// 1.05–1.1×.
//
// # Dawn toggles
//
// WEBTENSOR_DAWN_TOGGLES passes Dawn device toggles to every device the
// process opens, comma-separated, a leading "-" disabling one (for
// example "disable_robustness,-lazy_clear_resource_on_first_use"): for
// measuring what a toggle costs on a GPU. The library always disables
// timestamp_quantization, so that the profiler's kernel times are exact.
package wgpu
