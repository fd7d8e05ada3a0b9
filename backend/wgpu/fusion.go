//go:build cgo

package wgpu

// epilogue is WGSL spliced into a producer kernel (a GEMM variant or
// Conv2D) in place of its plain store, so that elementwise ops that follow
// the producer run in the same dispatch. See /work/spec/PLAN6.md.
type epilogue struct {
	// Key identifies Decls for the kernel cache.
	Key string
	// Decls is WGSL at module scope. It declares the writable storage
	// buffers at bindings 0..len(Outputs)-1 and the read-only ones at
	// len(Outputs)+Skip onwards (Skip bindings are the producer's own
	// inputs), and defines fn epilogue(i: u32, v: f32).
	Decls string
	// Outputs are bound read-write at 0..; Inputs read-only after the
	// producer's inputs.
	Outputs, Inputs []*allocation
}

// produce hands a producer kernel to the fusion engine. run records the
// producer with the epilogue it is given (nil: the plain store into out).
// The fusion engine may defer the call until an elementwise chain that
// consumes out has been collected.
func (d *Device) produce(out operand, alpha, beta float64, run func(epi *epilogue) error) error {
	return run(nil)
}
