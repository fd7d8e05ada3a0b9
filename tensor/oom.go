package tensor

import (
	"errors"

	"github.com/webtensor/webtensor/hal"
)

// Out of memory on a GPU. The backend has already trimmed its pool and
// retried the allocation once when it reports hal.ErrOutOfMemory. What
// happens next depends on the placement policy, for every op that places
// its operands at its entry (routed; see Placement for the list):
//
//   - Auto and MinimizeTransfers copy the operands to the CPU and run the
//     whole op again there (a composite op too: its steps never split);
//     the result lives on the CPU, the GPU's failures that the op
//     recorded are retracted (its Sync does not report them), and
//     PlacementStats counts the op in OOMFallbacks and the copies in
//     Moves.
//   - Explicit (the default), ForceGPU and ForceCPU keep the failure: the
//     result carries a *Error wrapping hal.ErrOutOfMemory that names the
//     op, the shape and dtype it was allocating, and the device, as every
//     device failure, and the device's Sync reports it.
//
// Ops that are not placed (views, Cast, Contiguous, Pad, OneHot, the
// creation ops, To) and the ops that write their operands in place (Step,
// BatchNorm in training with running statistics: a rerun elsewhere would
// write into copies) keep the failure under every policy. An operand that
// already failed fails the op anywhere, so it is not rerun.

// onCPUIfOOM returns run's result or, when that failed for want of GPU
// memory and the policy allows (see above), run's result with the
// operands ps replaced by copies on the CPU. run must read its operands
// through ps's variables, so that it sees the copies.
func onCPUIfOOM(op string, run func() *Tensor, ps ...**Tensor) *Tensor {
	out := run()
	if !fallsBackOnOOM(out, ps) {
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
	gpu.retractOOM(op, failure)
	return run()
}

// fallsBackOnOOM reports whether out failed for want of memory on a GPU
// in a way that rerunning on the CPU can fix.
func fallsBackOnOOM(out *Tensor, ps []**Tensor) bool {
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
	return true
}

// retractOOM forgets the device's recorded failures that the op that ran
// again elsewhere caused: failure, which its result carries, and any other
// out-of-memory failure named after op (a composite op's independent
// steps can each run out: the failures of its steps carry its name). A
// failure recorded after them takes their place.
func (d *Device) retractOOM(op string, failure error) {
	ours := func(err error) bool {
		if err == nil {
			return false
		}
		if err == failure {
			return true
		}
		var e *Error
		return errors.As(err, &e) && e.Op == op && errors.Is(err, hal.ErrOutOfMemory)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if ours(d.next) {
		d.next = nil
	}
	if ours(d.sticky) {
		d.sticky, d.next = d.next, nil
	}
}
