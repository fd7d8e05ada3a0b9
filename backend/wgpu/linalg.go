//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/hal"
)

// Linalg is not implemented on WebGPU: the decompositions of
// hal.LinalgOp are sequential, pivoting algorithms on small matrices,
// where a GPU does not pay, so this backend leaves the family out of its
// Capabilities and package tensor runs the ops on the CPU under the
// placement policies that move operands (see hal.LinalgOp). The call
// fails with hal.ErrUnsupported naming the kernel and dtype.
func (d *Device) Linalg(op hal.LinalgOp, dst []hal.View, a, b hal.View, args hal.LinalgArgs) error {
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", op.Kernel(), hal.ErrClosed)
	}
	return fmt.Errorf("webgpu: %s in %v: not implemented on WebGPU (the CPU backend runs it): %w", op.Kernel(), a.DType, hal.ErrUnsupported)
}
