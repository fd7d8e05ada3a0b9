// Package cpu is the pure-Go reference backend of webtensor.
//
// Importing it (usually for its side effect) registers the "cpu" backend
// with package hal. It has exactly one adapter, the host processor, and
// needs neither cgo nor any native library, so it is always available: it
// is the fallback when no GPU can be opened and the baseline that the GPU
// backends are checked against.
//
// It runs every HAL kernel for every dtype hal's kernel table defines it
// for: float32, float64 and float16, and int32 where the table allows
// (capabilities.go declares exactly that). float16 is stored as IEEE binary16 and computed
// in float32, rounding back to nearest even; float32 transcendentals are
// evaluated in float64 and rounded once; sums accumulate in float64
// (compensated for float64 input).
//
// It also implements hal's optional tier of fused kernels (softmax,
// Conv2D without an unfolded copy of the input, the optimizer steps, the
// activations), so package tensor never composes them here. Conv2D is an
// implicit GEMM whose B panels are packed straight from the input (per
// output-row segment, by an AVX2 loop at strides 1 and 2, from a
// zero-padded copy when the input is small: conv2d_pack_amd64.s), with
// images as the GEMM's columns when the window is wider than the output
// (a weight gradient), a direct loop for depthwise convolutions and a
// plain GEMM over the input for pointwise ones (conv2d*.go), which, like
// any product whose A block fits the mc×kc space and whose B has
// contiguous rows, packs B one panel at a time and multiplies it at once,
// prefetching the next panel's rows meanwhile (gemm_stream.go: the
// input's rows lie H·W apart, beyond the hardware prefetchers). float32
// (and float16) 3×3, stride-1, undilated convolutions with at least 16
// input and output channels per group run as Winograd F(4×4, 3×3)
// (conv2d_winograd.go): 36 GEMMs through the same microkernel on
// transformed tiles, a quarter of the multiplies and no 9× im2col
// expansion, within the same float32 error bound (1e-5·Σ|terms|); its
// input patches come from the implicit GEMM's zero-padded input copy, so
// that none meets the image's edge, eight tiles at a time on AVX2 (an
// 8×8 transpose per patch row, conv2d_winograd_amd64.s).
// WEBTENSOR_CONV_WINOGRAD=0 turns it off and =1 uses it wherever it
// applies (3×3, stride 1, 16+ input channels per group) however few the
// output channels or tiles; read once, at start-up, for side-by-side
// comparisons. The input gradient of a stride-1 convolution, one
// convolution over the flipped weight, takes it too. A small CNN's
// first layer has its own two paths (conv2d_direct.go): a stride-1
// convolution with a tiny K (C·KH·KW ≤ 27) runs the microkernel over
// zero-padded copies of the input planes, each B panel row one contiguous
// copy, and the weight gradient of such a layer, with too few "images"
// (its input channels) to fill a panel, is one product per channel of
// the stacked window matrices by the gradient read in place. Max pooling
// over 2×2 windows at stride 2 runs eight windows at a time in AVX2
// (pool_amd64.s), with the scalar path's first-largest, first-NaN rule.
// Depthwise float32 (and float16) 3×3 convolutions at strides 1 and 2
// (conv2d_depthwise.go, MobileNet's) split each zero-padded input plane
// into stride² phase planes, so that the whole output plane is one 1-D
// sum of nine shifted runs: nine weights in registers, eight outputs per
// AVX2 FMA (conv2d_depthwise_amd64.s), the junk columns between rows
// dropped on the way out; other depthwise windows keep the direct loop.
//
// Buffers are Go slices of 8-byte words, so every dtype is aligned. Alloc
// rounds a request up to a size class and serves it from a pool of freed
// buffers when one of that class is there, as the WebGPU backend does: a
// training step frees and reallocates the same shapes every iteration, and
// a fresh large slice costs page faults and zeroing. The pool is capped
// (its oldest blocks go back to the garbage collector past the cap),
// Stats reports its bytes and reuses, and Close empties it.
//
// Kernels run synchronously on the calling goroutine. Large ones are cut
// into chunks shared with helper goroutines that stay alive between
// kernels (spinning briefly before they park, since waking a parked
// thread can cost more than a chunk; the spin pauses the core between
// polls and takes no scheduler lock), up to GOMAXPROCS; small ones stay
// on the caller. Each participant runs its own chunk first and then
// claims the rest, so chunks that no helper is free to take run on the
// caller. A matrix product split across workers has them pack its
// operands once between them, then multiply blocks of a 2-D grid of c's
// tiles out of the shared packed panels (gemm.go); a Winograd convolution
// with fewer blocks of tiles than workers cuts each block's products by
// output channels over one shared input transform. Sync therefore never
// has anything to wait for, and
// failures (an out-of-range gather index included) are reported by the
// call itself. All methods are safe for concurrent use.
//
// On amd64 with AVX2 and FMA (AVX-512 where the CPU has it), the
// contiguous float32 paths (GEMM's inner kernels, elementwise arithmetic,
// sums and extrema, softmax rows, the SGD, Adam/AdamW, RMSProp and
// Adagrad updates) run in assembly; elsewhere portable loops give the
// same results (the optimizer loops to an ulp in rare ties: their fused
// multiply-adds round through float64). GEMM panels are packed by 8×8
// register transposes (B, and lanes of kb not a multiple of 8 by one
// overlapping last tile) and 6×8 ones (the six-row A panels), gemm_amd64.s.
// A strided view's runs of one broadcast value (a convolution's channel
// bias over its plane) are filled by doubling copies, and a copy of a
// scalar broadcast over every axis (max pooling's zero gradient) is a
// fill (view.go, elementwise.go). The source is laid out
// by kernel family, beside the pieces every kernel shares: the strided
// walk and dtype conversions, float16, the buffer pool and the helper
// goroutines.
package cpu
