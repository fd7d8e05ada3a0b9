package tensor

import "slices"

// placeNew is where host data for dev goes under the placement policy:
// n is its element count. Auto keeps data for the accelerator below its
// creation threshold on the CPU, the Force policies send it to their
// device; a device that cannot hold dtype keeps what the caller asked for,
// which then fails (or not) as it always did.
func placeNew(dev *Device, dtype DType, n int) *Device {
	if dev == nil {
		return dev
	}
	target := dev
	switch CurrentPlacement() {
	case Auto:
		if gpu := PlacementGPU(); dev == gpu && !ThresholdsFor(gpu).reached(familyCreation, int64(n)) {
			target = cpuDevice()
		}
	case ForceCPU:
		target = cpuDevice()
	case ForceGPU:
		if gpu := PlacementGPU(); gpu != nil {
			target = gpu
		}
	}
	if target == dev || !dtype.Valid() || !canHoldDType(target, dtype) {
		return dev
	}
	if CurrentPlacement() == Auto {
		placementStats.keptOnCPU.Add(1)
	}
	return target
}

// routeStep moves an optimizer step's read-only operands (grad, scale) to
// param's device: the step writes param and its state in place, so it
// runs where they are, whatever the policy (except Explicit, which moves
// nothing).
func routeStep(op string, param *Tensor, grad, scale **Tensor) (moved []*Tensor) {
	if CurrentPlacement() == Explicit {
		return nil
	}
	param.checkLive(op)
	for _, p := range []**Tensor{grad, scale} {
		if t := *p; t != nil {
			t.checkLive(op)
			if t.dev != param.dev && canHoldDType(param.dev, t.dtype) {
				c := t.To(param.dev)
				countMove(t)
				moved = append(moved, c)
				*p = c
			}
		}
	}
	countOp(param.dev)
	return moved
}

// Sizes of ops in their family's measure, from operand shapes alone, for
// route: they run before the op's own shape checks, so they must not
// assume valid shapes (misuse panics later, with the op's message).

// elementwiseSize is the largest operand's element count, the output's
// size without broadcasting to a larger shape.
func elementwiseSize(ts ...*Tensor) int64 {
	var n int64
	for _, t := range ts {
		if t != nil && !t.released.Load() {
			n = max(n, int64(t.Len()))
		}
	}
	return n
}

// matmulSize estimates the multiply-adds of op(a)·op(b): each element of
// a meets each column of b, and each element of b each row of a; the
// larger count covers whichever operand broadcasts over batch axes.
func matmulSize(a *Tensor, transA bool, b *Tensor, transB bool) int64 {
	if a == nil || b == nil || a.released.Load() || b.released.Load() {
		return 0
	}
	m, n := int64(1), int64(1)
	if r := len(a.shape); r >= 2 {
		m = int64(a.shape[r-2])
		if transA {
			m = int64(a.shape[r-1])
		}
	}
	if r := len(b.shape); r >= 2 {
		n = int64(b.shape[r-1])
		if transB {
			n = int64(b.shape[r-2])
		}
	}
	return max(int64(a.Len())*n, int64(b.Len())*m)
}

// routeList is route for a list of operands (Concat, Stack). It never
// writes to ts, which may be the caller's slice: it returns ts itself when
// nothing moves, else a new slice, and the copies to release.
func routeList(op string, ts []*Tensor) (placed, moved []*Tensor) {
	if CurrentPlacement() == Explicit || len(ts) == 0 {
		return ts, nil
	}
	placed = slices.Clone(ts)
	ps := make([]**Tensor, len(placed))
	var size int64
	for i, t := range placed {
		ps[i] = &placed[i]
		if t != nil && !t.released.Load() {
			size += int64(t.Len())
		}
	}
	moved = route(op, familyElementwise, size, ps...)
	if moved == nil {
		return ts, nil
	}
	return placed, moved
}
