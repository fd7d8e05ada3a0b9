// Package haltest is the conformance suite that every hal backend runs.
//
// A backend's tests open a device and hand it to [Run], which tests every
// kernel key of hal.Kernels() in every dtype: against the suite's own
// float64 references where the device declares the kernel in its
// Capabilities (which may name only dtypes hal's kernel table defines the
// kernel for), and for hal.ErrUnsupported where it does not: a backend
// may leave out the optional tier of fused kernels (hal.Optional), and
// [RequiredOnly] shows a device as one that does. Inputs are
// random, at odd sizes, and strided every way a View allows (transposed,
// permuted, sliced with a step, broadcast with stride 0, at an offset), and
// output buffers are checked to be untouched outside dst. Run also checks
// the byte-level memory contract, argument validation (sentinels and
// messages), the counters in hal.Stats and asynchronous error reporting.
// [RunClosed] checks a closed device; [Benchmark] times the kernels.
//
// The suite imports no backend and shares no code with one: its Philox,
// float16 conversion and every kernel reference are written here from the
// definitions in package hal. Tolerances are in tolerance.go.
//
// Run takes about ten seconds on the CPU backend and on a software GPU
// (WebGPU on llvmpipe: about 1.5 GB/s and 1 GFLOPS); the sizes that matter
// for correctness (1M and 16.8M-element reductions, dispatches past 65,535
// workgroups, rows longer than 65,535 loop iterations) are the only large
// ones. Set HALTEST_ERRORS=1 to log, per toleranced case, how
// much of its tolerance the device used and its worst error in ulps.
//
// The tolerances follow the device's floating-point rules (accuracy.go):
// IEEE 754 for the CPU backend, WGSL's accuracy table for WebGPU devices,
// which lets a GPU divide to 2.5 ulp, round to either neighbour and flush
// subnormals. TestMutations checks that the suite still fails kernels
// broken by a little more than that.
package haltest
