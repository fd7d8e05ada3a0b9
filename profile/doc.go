// Package profile times what a tensor.Device runs and reports it the way
// torch.profiler does: a table of per-kernel totals (key_averages) and a
// Chrome trace-event JSON file that chrome://tracing and Perfetto
// (ui.perfetto.dev) open.
//
//	p, err := profile.Start(dev)
//	... // tensor work on dev
//	prof, err := p.Stop()
//	prof.WriteTable(os.Stdout)
//	prof.WriteTraceFile("trace.json")
//
// or, for one function, profile.Run(dev, func() error { ... }).
//
// # What is timed, and by which clock
//
// Kernels are timed by the backend, behind hal.Profiler:
//
//   - on a WebGPU device with the timestamp-query feature (Dawn's Vulkan,
//     Metal and D3D12 adapters, lavapipe, NVIDIA's Vulkan driver), on the
//     device's own clock: every kernel runs in a compute pass of its own
//     whose beginning and end write timestamps. Dawn reports them in
//     nanoseconds, but may quantize them (its timestamp_quantization
//     toggle), so a very short kernel can read as 0;
//   - on a WebGPU device without it (llvmpipe through OpenGL ES, a browser
//     that withholds the feature), on the host's clock: every kernel is
//     submitted alone and waited for, so its time includes the
//     submission's overhead.
//
// A backend without hal.Profiler (cpu) reports no kernels; its ops are
// timed on the host around each call, which on the CPU is the op's run
// time, and the table lists those instead. The table's first line and
// the trace's metadata name the clock.
//
// Ops (the tensor operations issued, such as "MatMul" or "Softmax") are
// always timed on the host around their call into the backend. On an
// asynchronous device that is the time to issue them, not to run them: a
// second table lists them, and the trace shows them on a host track above
// the device's kernels.
//
// Profiling changes how a WebGPU device submits work (a pass per kernel, a
// read-back per batch of 256 kernels; a wait per kernel without
// timestamps), so compare kernels within a profile and measure end-to-end
// speed with benchmarks, not profiles. Profiling off costs nothing beyond
// one atomic load per op: no query set exists, no pass is split.
package profile
