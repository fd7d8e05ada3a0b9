package tensor

import (
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Placement is the process-wide policy that decides which device an
// operation runs on, and whether operands on different devices are moved
// or refused.
//
// Every public op that computes from tensors places its operands once, at
// its entry (see route): elementwise ops and Where, reductions (Mean, Var
// and Std included), MatMul/Gemm/MatVec/Outer, Concat/Stack,
// Gather/IndexSelect/ScatterAdd, Conv2d, ConvTranspose2d, the poolings,
// BatchNorm, LayerNorm, Softmax/LogSoftmax, Dropout, RBFKernel, AffineGrid,
// GridSample and Step. A composite op (LayerNorm is a mean, a subtraction,
// …) runs whole on the device its entry chose: its steps are not placed
// again, so it never splits across devices. Ops of one operand that only
// move or reshape data (views, Cast, Contiguous, Pad, OneHot) and the
// creation ops that fill a device (Zeros, Full, Arange, Rand, …) run where
// their operand or device is. Host data (FromFloat32, FromFloat64,
// FromInt32) goes where the policy says below. Values never depend on the
// policy beyond the usual float tolerance between backends.
type Placement int

const (
	// Explicit, the default, never moves anything, as PyTorch: an op runs
	// on the device that holds its operands, new host data goes to the
	// device asked for, and operands on different devices are misuse (a
	// panic with an *Error naming the op and each operand's shape, dtype
	// and device).
	Explicit Placement = iota
	// Auto routes each op whole by its size. An op whose operands share a
	// GPU runs there. An op whose operands are all on the CPU runs on the
	// CPU, unless its size reaches its family's threshold for the
	// accelerator (see SetPlacementGPU, Thresholds), where it runs on the
	// accelerator: the operands are uploaded and the result stays there.
	// Operands on different devices meet on the accelerator at or above
	// the threshold, else on the device that already holds most operand
	// bytes, the smaller side moving. Host data for the accelerator below
	// the creation threshold stays on the CPU, to be moved by the first op
	// that needs it elsewhere.
	Auto
	// ForceGPU runs every placed op, and puts new host data, on the
	// accelerator, moving operands there. Dtypes the accelerator cannot
	// hold (Float64 on WebGPU) stay where they are.
	ForceGPU
	// ForceCPU runs every placed op, and puts new host data, on the CPU.
	ForceCPU
	// MinimizeTransfers runs an op on the device that holds the most
	// operand bytes, moving only the smaller side; it never moves an op
	// whose operands share a device.
	MinimizeTransfers
)

var placementNames = [...]string{"Explicit", "Auto", "ForceGPU", "ForceCPU", "MinimizeTransfers"}

func (p Placement) String() string {
	if p >= 0 && int(p) < len(placementNames) {
		return placementNames[p]
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// EnvPlacement is the environment variable that sets the placement policy
// at start-up: explicit (the default), auto, force-gpu, force-cpu or
// minimize-transfers (case, '-' and '_' do not matter, so ForceGPU works
// too). An unknown value is logged and ignored.
const EnvPlacement = "WEBTENSOR_PLACEMENT"

// ParsePlacement returns the policy that s names, as EnvPlacement takes it.
func ParsePlacement(s string) (Placement, error) {
	key := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	for i, name := range placementNames {
		if key == strings.ToLower(name) {
			return Placement(i), nil
		}
	}
	return Explicit, fmt.Errorf("unknown placement %q (want explicit, auto, force-gpu, force-cpu or minimize-transfers)", s)
}

// placement holds a Placement. It is set from EnvPlacement by its
// initializer rather than by an init function, so that package-level
// variables that read the policy (in tests, what the process started
// with) see it.
var placement = func() *atomic.Int32 {
	p := new(atomic.Int32)
	p.Store(int32(placementFromEnv()))
	return p
}()

// placementFromEnv is the policy that EnvPlacement names, else Explicit.
func placementFromEnv() Placement {
	value, set := os.LookupEnv(EnvPlacement)
	if !set || value == "" {
		return Explicit
	}
	p, err := ParsePlacement(value)
	if err != nil {
		// A typo must not stop a program that would run under the
		// default; it is reported, as a broken thresholds file is.
		log.Printf("webtensor: ignoring %s: %v", EnvPlacement, err)
		return Explicit
	}
	return p
}

// SetPlacement sets the process-wide placement policy and returns the
// previous one, so that a caller can restore it.
func SetPlacement(p Placement) Placement {
	if p < Explicit || p > MinimizeTransfers {
		misuse("SetPlacement", "unknown placement %v", p)
	}
	return Placement(placement.Swap(int32(p)))
}

// CurrentPlacement returns the process-wide placement policy.
func CurrentPlacement() Placement { return Placement(placement.Load()) }

// accelerator is the GPU that Auto and ForceGPU move CPU work to, once
// SetPlacementGPU has set it (nil until then). It is atomic because every
// placed op reads it.
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
// accelerators only when set here or named by WEBTENSOR_DEVICE.
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
