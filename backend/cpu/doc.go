// Package cpu is the pure-Go reference backend of webtensor.
//
// Importing it (usually for its side effect) registers the "cpu" backend
// with package hal. It has exactly one adapter, the host processor, and
// needs neither cgo nor any native library, so it is always available: it
// is the fallback when no GPU can be opened and the baseline that the GPU
// backends are checked against.
//
// It runs every HAL kernel for float32, float64 and float16, and int32
// where hal/ops.go allows. float16 is stored as IEEE binary16 and computed
// in float32, rounding back to nearest even; float32 transcendentals are
// evaluated in float64 and rounded once; sums accumulate in float64
// (compensated for float64 input).
//
// Buffers are Go slices of 8-byte words, so every dtype is aligned and
// memory is managed by the garbage collector; nothing is pooled. Kernels
// run synchronously on the calling goroutine, fanning out across GOMAXPROCS
// goroutines once the work is large enough to pay for the hand-off; Sync
// therefore never has anything to wait for, and failures (an out-of-range
// gather index included) are reported by the call itself. All methods are
// safe for concurrent use.
//
// The files follow the kernel families: elementwise.go (the strided
// engine, Fill, Copy, Where), unary.go, binary.go, reduce.go, matmul.go,
// index.go (Gather, ScatterAdd), window.go (Im2Col, Col2Im, Pool2D,
// GridSample) and random.go; view.go holds the strided walk and dtype
// conversion every kernel shares, half.go the float16 conversions.
package cpu
