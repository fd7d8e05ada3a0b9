// Package cpu is the pure-Go reference backend of webtensor.
//
// Importing it (usually for its side effect) registers the "cpu" backend
// with package hal. It has exactly one adapter, the host processor, and
// needs neither cgo nor any native library, so it is always available: it
// is the fallback when no GPU can be opened and the baseline that the GPU
// backends are checked against.
//
// Buffers are ordinary Go []float32 slices, so memory is managed by the Go
// garbage collector and nothing is pooled. Kernels run synchronously on the
// calling goroutine, fanning out across GOMAXPROCS goroutines once the work
// is large enough to pay for the hand-off; Sync therefore never has anything
// to wait for. All methods are safe for concurrent use.
package cpu
