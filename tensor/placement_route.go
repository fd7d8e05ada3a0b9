package tensor

import (
	"runtime"
	"strings"
	"unicode"

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

// route decides where op runs under the placement policy and moves the
// operands that are elsewhere, replacing *p with the copy. It returns the
// copies, which the caller releases once the op is issued. Nil operands
// are skipped; every other operand must be live. size is the op's size in
// its family's measure. Under Explicit, and whenever the operands already
// sit where the op runs, it does nothing and allocates nothing.
func route(op string, fam family, size int64, ps ...**Tensor) (moved []*Tensor) {
	policy := CurrentPlacement()
	if policy == Explicit {
		return nil
	}
	var first *Device
	mixed := false
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
	if !mixed && target != first && !calledByUser(op) {
		// A composite op inside this package called us: it combines our
		// result with tensors on first through internal kernels that do
		// not route, so the result must stay on first.
		target = first
	}
	countOp(target)
	for _, p := range ps {
		if t := *p; t != nil && t.dev != target {
			c := t.To(target)
			countMove(t)
			moved = append(moved, c)
			*p = c
		}
	}
	return moved
}

// placeOp is the policy's choice of device, or nil to leave the operands
// where they are (only when they share first).
func placeOp(policy Placement, fam family, size int64, first *Device, mixed bool, ps []**Tensor) *Device {
	switch policy {
	case ForceCPU:
		return cpuDevice()
	case ForceGPU:
		if gpu := opAccelerator(first, ps); gpu != nil {
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
	gpu := opAccelerator(first, ps)
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
func opAccelerator(first *Device, ps []**Tensor) *Device {
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

const packagePrefix = "github.com/webtensor/webtensor/tensor."

// calledByUser reports whether op was called from outside this package
// rather than by one of its composite ops (LayerNorm calling Mean, Var
// calling Mean, …). It walks the frames above route while they are in this
// package: exported functions named op are op's own wrappers (Add and
// (*Tensor).Add), unexported ones are plumbing (publicBinary, reduce); any
// other exported function is a composite. It runs only when a move of
// operands that share a device is planned, which costs far more.
func calledByUser(op string) bool {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		name, ok := strings.CutPrefix(f.Function, packagePrefix)
		if !ok {
			return true
		}
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if name != op && name != "" && unicode.IsUpper([]rune(name)[0]) {
			return false
		}
		if !more {
			return true
		}
	}
}
