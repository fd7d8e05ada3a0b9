package tensor

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Placement is the process-wide policy that decides which device an
// operation runs on when its operands do not settle it, and whether
// operands on different devices are moved or refused.
//
// Routing happens at the entry of the public ops that take tensors
// (elementwise, reductions, MatMul/Gemm/MatVec/Outer, Where, Concat/Stack,
// Gather/IndexSelect/ScatterAdd, Step's read-only operands) and in
// FromFloat32/FromFloat64/FromInt32. Other ops (views, Cast, Pad, the nn
// ops such as Conv2d, pooling, LayerNorm, BatchNorm, Softmax, …) run where
// their operand is and refuse mixed devices as under Explicit. Values never depend on the
// policy beyond the usual float tolerance between backends.
type Placement int

const (
	// Auto routes by size. An op whose operands share a GPU runs there.
	// An op whose operands are all on the CPU runs on the CPU, unless its
	// size reaches its family's threshold for the accelerator (see
	// SetPlacementGPU), where it runs on the accelerator: the operands
	// are uploaded and the result stays there. Operands on different
	// devices run on the accelerator at or above the threshold, else on
	// the device that already holds most operand bytes, moving the
	// smaller side. Host data for the accelerator below the creation
	// threshold stays on the CPU.
	Auto Placement = iota
	// ForceGPU runs every routed op, and puts new host data, on the
	// accelerator, moving operands there. Dtypes the accelerator cannot
	// hold (Float64 on WebGPU) stay where they are.
	ForceGPU
	// ForceCPU runs every routed op, and puts new host data, on the CPU.
	ForceCPU
	// MinimizeTransfers runs an op on the device that holds the most
	// operand bytes, moving only the smaller side; it never moves an op
	// whose operands share a device.
	MinimizeTransfers
	// Explicit never moves anything: an op runs on its operands' device
	// and operands on different devices are misuse, as in PyTorch.
	Explicit
)

var placementNames = [...]string{"Auto", "ForceGPU", "ForceCPU", "MinimizeTransfers", "Explicit"}

func (p Placement) String() string {
	if p >= 0 && int(p) < len(placementNames) {
		return placementNames[p]
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

var placement atomic.Int32 // a Placement; the zero value is Auto

// SetPlacement sets the process-wide placement policy and returns the
// previous one, so that a caller can restore it.
func SetPlacement(p Placement) Placement {
	if p < Auto || p > Explicit {
		misuse("SetPlacement", "unknown placement %v", p)
	}
	return Placement(placement.Swap(int32(p)))
}

// CurrentPlacement returns the process-wide placement policy.
func CurrentPlacement() Placement { return Placement(placement.Load()) }

// accelerator is the GPU that Auto and ForceGPU move CPU work to, once
// SetPlacementGPU has set it (nil until then). It is atomic because every
// routed op reads it.
var accelerator atomic.Pointer[struct{ dev *Device }]

// defaultAccelerator is Default's GPU, when it picks one. It opens the
// device itself rather than calling Default, so that a bad
// WEBTENSOR_DEVICE cannot make an op that never asked for the default
// panic.
var defaultAccelerator = sync.OnceValue(func() *Device {
	name := DefaultName()
	if name == cpuBackend {
		return nil
	}
	dev, err := Open(name)
	if err != nil {
		return nil
	}
	return dev
})

// SetPlacementGPU sets the accelerator that Auto and ForceGPU move CPU work
// to, and returns the previous setting. nil means no accelerator: work on
// the CPU stays there. Until it is called the accelerator is the GPU that
// Default picks, if it picks one, so software adapters (llvmpipe) are
// accelerators only when set here.
func SetPlacementGPU(dev *Device) (previous *Device) {
	if dev != nil && dev.name == cpuBackend {
		misuse("SetPlacementGPU", "the accelerator must not be the CPU")
	}
	previous = PlacementGPU()
	accelerator.Store(&struct{ dev *Device }{dev})
	return previous
}

// PlacementGPU returns the accelerator that Auto and ForceGPU move CPU work
// to, or nil when there is none.
func PlacementGPU() *Device {
	if a := accelerator.Load(); a != nil {
		return a.dev
	}
	return defaultAccelerator()
}

// cpuDevice is the CPU backend, which always opens.
var cpuDevice = sync.OnceValue(func() *Device {
	dev, err := Open(cpuBackend)
	if err != nil {
		panic(&Error{Op: "placement", Msg: "cannot open the CPU backend", Err: err})
	}
	return dev
})
