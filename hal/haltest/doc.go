// Package haltest is the conformance suite that every hal backend runs.
//
// A backend's tests open a device and hand it to [Run], which checks each
// kernel against an independent float64 reference on random inputs, the
// byte-level memory contract, argument validation and the counters in
// hal.Stats; [Benchmark] times the same kernels. The package imports no
// backend, so it can only use what hal.Device promises.
//
// The suite is sized to finish in seconds on a software GPU (about
// 1.5 GB/s elementwise and 1 GFLOPS matmul): the 5M-element case is only
// run for elementwise kernels, and all matmuls together are under 10 MFLOP.
package haltest
