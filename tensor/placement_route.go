package tensor

import (
	"github.com/webtensor/webtensor/hal"
)

// family groups ops whose CPU/GPU crossover has one size measure; each has
// its own threshold.
type family int

const (
	familyElementwise family = iota // output elements
	familyReduction                 // input elements
	familyMatMul                    // multiply-adds
	familyWindow                    // output elements × window area
	familyCreation                  // elements of new host data
)

// Placement happens once per public op, at its entry, in one call:
//
//	return routed(op, family, size, func() *Tensor { … }, &a, &b)
//
// places the operands a and b (the variables themselves, so that the body
// sees the moved copies), runs the body where they now are, and reruns it
// on the CPU when it ran out of GPU memory and the policy allows. Ops of a
// list of operands (Concat, Stack) place it with routeList, and ops that
// write into operands (Step, BatchNorm's running statistics) with
// routeInPlace. The body of a composite op calls the package's unplaced
// kernels (binaryOp, unary, reduceHere, gemm, …), never the public ops,
// so that it runs whole on the device its entry chose.

// routed is the entry of a public op: it places the operands ps with
// route, runs run on their device and, when that ran out of GPU memory,
// reruns it on the CPU where the policy allows (onCPUIfOOM). run must read
// its operands through ps's variables and must not route again.
func routed(op string, fam family, size int64, run func() *Tensor, ps ...**Tensor) *Tensor {
	defer releaseAll(route(op, fam, size, ps...)...)
	return onCPUIfOOM(op, run, ps...)
}

// route decides where op runs under the placement policy and moves the
// operands that are elsewhere, replacing *p with the copy. It returns the
// copies, which the caller releases once the op is issued. Nil operands
// are skipped; every other operand must be live. size is the op's size in
// its family's measure. Under Explicit it only checks that the operands
// share a device; then, and whenever the operands already sit where the
// op runs, it allocates nothing.
func route(op string, fam family, size int64, ps ...**Tensor) (moved []*Tensor) {
	policy := CurrentPlacement()
	first, mixed := operandDevices(op, ps)
	if policy == Explicit {
		if mixed {
			mixedDevices(op, "the Explicit placement moves nothing: copy one with To", ps)
		}
		return nil
	}
	if first == nil {
		return nil
	}
	target := placeOp(policy, fam, size, first, mixed, ps)
	if (mixed || target != first) && !canHold(target, ps) {
		if !mixed {
			countOp(first)
			return nil
		}
		// The preferred device cannot hold a dtype: the CPU holds every
		// dtype, so meet there rather than refuse the op.
		target = cpuDevice()
	}
	countOp(target)
	return moveTo(target, ps)
}

// routeInPlace places an op that writes into the operands written (Step,
// BatchNorm's running statistics): under every policy it runs where they
// are, for a write into a copy would be lost, and the read-only operands
// ps move there. Written operands on different devices are misuse, and
// under Explicit so are read-only ones elsewhere. Nil operands are
// skipped; written must hold one that is not nil.
func routeInPlace(op string, written []*Tensor, ps ...**Tensor) (moved []*Tensor) {
	var home []**Tensor
	for i := range written {
		if written[i] != nil {
			home = append(home, &written[i])
		}
	}
	dev, mixed := operandDevices(op, home)
	if mixed {
		mixedDevices(op, "they are written in place", home)
	}
	if CurrentPlacement() == Explicit {
		all := append(home, ps...)
		if _, mixed := operandDevices(op, all); mixed {
			mixedDevices(op, "the Explicit placement moves nothing: copy one with To", all)
		}
		return nil
	}
	countOp(dev)
	var movable []**Tensor
	for _, p := range ps {
		if t := *p; t != nil && canHoldDType(dev, t.dtype) {
			movable = append(movable, p)
		}
	}
	return moveTo(dev, movable)
}

// operandDevices checks that the operands are live and returns the device
// of the first and whether any other is elsewhere.
func operandDevices(op string, ps []**Tensor) (first *Device, mixed bool) {
	for _, p := range ps {
		t := *p
		if t == nil {
			continue
		}
		t.checkLive(op)
		if first == nil {
			first = t.dev
		} else if t.dev != first {
			mixed = true
		}
	}
	return first, mixed
}

// mixedDevices panics with the misuse of operands on different devices,
// naming the first two that differ; why says what makes it misuse.
func mixedDevices(op, why string, ps []**Tensor) {
	var first *Tensor
	for _, p := range ps {
		t := *p
		switch {
		case t == nil:
		case first == nil:
			first = t
		case t.dev != first.dev:
			misuse(op, "tensors on different devices: %s on %s vs %s on %s (%s)",
				nnDescribe(first), first.dev.Name(), nnDescribe(t), t.dev.Name(), why)
		}
	}
}

// moveTo copies the operands that are not on dev there, replacing *p, and
// returns the copies.
func moveTo(dev *Device, ps []**Tensor) (moved []*Tensor) {
	for _, p := range ps {
		if t := *p; t != nil && t.dev != dev {
			c := t.To(dev)
			countMove(t)
			moved = append(moved, c)
			*p = c
		}
	}
	return moved
}

// placeOp is the policy's choice of device for an op whose operands are
// on first (and elsewhere too when mixed).
func placeOp(policy Placement, fam family, size int64, first *Device, mixed bool, ps []**Tensor) *Device {
	switch policy {
	case ForceCPU:
		return cpuDevice()
	case ForceGPU:
		if gpu := opAccelerator(ps); gpu != nil {
			return gpu
		}
		return first
	case MinimizeTransfers:
		if !mixed {
			return first
		}
		return heaviest(ps)
	}
	// Auto.
	cpu := cpuDevice()
	if !mixed && first != cpu {
		return first
	}
	gpu := opAccelerator(ps)
	if gpu == nil || !ThresholdsFor(gpu).reached(fam, size) {
		if mixed {
			return heaviest(ps)
		}
		return first
	}
	return gpu
}

// opAccelerator is the GPU an op may move to: one its operands are already
// on, else the process's accelerator.
func opAccelerator(ps []**Tensor) *Device {
	cpu := cpuDevice()
	for _, p := range ps {
		if t := *p; t != nil && t.dev != cpu {
			return t.dev
		}
	}
	return PlacementGPU()
}

// heaviest is the device that holds the most operand bytes (the first
// such in operand order), so that moving the rest costs least.
func heaviest(ps []**Tensor) *Device {
	var best *Device
	var bestBytes int64
	for i, p := range ps {
		t := *p
		if t == nil {
			continue
		}
		var bytes int64
		for _, q := range ps[i:] {
			if u := *q; u != nil && u.dev == t.dev {
				bytes += int64(u.Len()) * int64(u.dtype.Size())
			}
		}
		if best == nil || bytes > bestBytes {
			best, bestBytes = t.dev, bytes
		}
	}
	return best
}

// canHold reports whether dev can hold every operand's dtype.
func canHold(dev *Device, ps []**Tensor) bool {
	for _, p := range ps {
		if t := *p; t != nil && !canHoldDType(dev, t.dtype) {
			return false
		}
	}
	return true
}

func canHoldDType(dev *Device, dtype DType) bool {
	return dev.caps().Supports(hal.KernelCopy, dtype)
}
