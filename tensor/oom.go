package tensor

import (
	"errors"

	"github.com/webtensor/webtensor/hal"
)

// Out of memory on a GPU. The backend has already trimmed its pool and
// retried the allocation once when it reports hal.ErrOutOfMemory. What
// happens next depends on the placement policy, and only for routed ops
// called by the user:
//
//   - Auto and MinimizeTransfers copy the operands to the CPU and run the
//     op again there; the result lives on the CPU, the GPU's failure is
//     retracted (its Sync does not report it), and PlacementStats counts
//     the op in OOMFallbacks and the copies in Moves.
//   - Explicit, ForceGPU and ForceCPU keep the failure: the result carries
//     a *Error wrapping hal.ErrOutOfMemory that names the op, the shape and
//     dtype it was allocating, and the device, as every device failure.
//
// Composite ops (LayerNorm, Softmax, Conv2d, …) run inner ops that must
// stay on their operands' device; an out-of-memory failure inside them is
// kept, unless the composite is itself a routed op, which then reruns
// whole on the CPU.

// onCPUIfOOM returns run's result or, when that failed for want of GPU
// memory and the policy allows (see above), run's result with the
// operands ps replaced by copies on the CPU. run must read its operands
// through ps's variables, so that it sees the copies.
func onCPUIfOOM(op string, run func() *Tensor, ps ...**Tensor) *Tensor {
	out := run()
	if !fallsBackOnOOM(op, out, ps) {
		return out
	}
	gpu, failure := out.dev, out.err
	out.Release()
	cpu := cpuDevice()
	var copies []*Tensor
	for _, p := range ps {
		if t := *p; t != nil && t.dev != cpu {
			c := t.To(cpu)
			countMove(t)
			copies = append(copies, c)
			*p = c
		}
	}
	defer releaseAll(copies...)
	placementStats.oomFallbacks.Add(1)
	countOp(cpu)
	gpu.retract(failure)
	return run()
}

// fallsBackOnOOM reports whether out failed for want of memory on a GPU
// in a way that rerunning on the CPU can fix.
func fallsBackOnOOM(op string, out *Tensor, ps []**Tensor) bool {
	if out == nil || out.err == nil || !errors.Is(out.err, hal.ErrOutOfMemory) {
		return false
	}
	if p := CurrentPlacement(); p != Auto && p != MinimizeTransfers {
		return false
	}
	cpu := cpuDevice()
	if out.dev == cpu {
		return false
	}
	for _, p := range ps {
		// An operand that already failed fails the op anywhere.
		if t := *p; t != nil && (t.err != nil || !canHoldDType(cpu, t.dtype)) {
			return false
		}
	}
	// A composite's inner op must keep its result on the composite's
	// device (see route); only the op the user called may move.
	return calledByUser(op)
}

// retract forgets err as the device's recorded failure, when it is: the
// op that failed ran again elsewhere. A failure recorded after it takes
// its place.
func (d *Device) retract(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch err {
	case d.sticky:
		d.sticky, d.next = d.next, nil
	case d.next:
		d.next = nil
	}
}
