package tensor

import (
	"errors"
	"sync"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/placement"
)

// This file is the package's whole contact with placement and the
// out-of-memory fallback, which live in internal/placement: the public
// placement API, as aliases and forwarders, and the routing hook that op
// entries call (routed, routeList, routeInPlace, placeNew) with the Host
// that the router needs. Op entries pass a family and a size measure
// (placement_sizes.go); nothing else in the package reaches placement.

// Placement is the process-wide policy that decides which device an
// operation runs on, and whether operands on different devices are moved
// or refused.
//
// Every public op that computes from tensors places its operands once, at
// its entry (see routed): elementwise ops and Where, reductions (Mean, Var
// and Std included), MatMul/Gemm/MatVec/Outer, Concat/Stack,
// Gather/IndexSelect/ScatterAdd, Conv2d, ConvTranspose2d, the poolings,
// BatchNorm, LayerNorm, Softmax/LogSoftmax, Dropout, RBFKernel, AffineGrid,
// GridSample, Step and the linalg ops (Solve, Inv, Cholesky, QR, SVD, Eigh
// …, which every policy but Explicit sends to the CPU when the device of
// choice lacks their kernels, as WebGPU does). A composite op (LayerNorm is a mean, a subtraction,
// …) runs whole on the device its entry chose: its steps are not placed
// again, so it never splits across devices. Ops of one operand that only
// move or reshape data (views, Cast, Contiguous, Pad, OneHot) and the
// creation ops that fill a device (Zeros, Full, Arange, Rand, …) run where
// their operand or device is. Host data (FromFloat32, FromFloat64,
// FromInt32) goes where the policy says below. Values never depend on the
// policy beyond the usual float tolerance between backends.
//
// Out of GPU memory, under Auto and MinimizeTransfers, a placed op (not
// Step or BatchNorm's in-place training update) copies its operands to the
// CPU and runs again there, whole: its result is on the CPU, the GPU's
// failures that it recorded are retracted (Device.Sync does not report
// them), and PlacementCounters.OOMFallbacks counts it. Under the other
// policies, and for ops that are not placed, the result carries an *Error
// wrapping hal.ErrOutOfMemory.
type Placement = placement.Policy

const (
	// Explicit, the default, never moves anything, as PyTorch: an op runs
	// on the device that holds its operands, new host data goes to the
	// device asked for, and operands on different devices are misuse (a
	// panic with an *Error naming the op and each operand's shape, dtype
	// and device).
	Explicit = placement.Explicit
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
	Auto = placement.Auto
	// ForceGPU runs every placed op, and puts new host data, on the
	// accelerator, moving operands there. Dtypes the accelerator cannot
	// hold (Float64 on WebGPU) stay where they are.
	ForceGPU = placement.ForceGPU
	// ForceCPU runs every placed op, and puts new host data, on the CPU.
	ForceCPU = placement.ForceCPU
	// MinimizeTransfers runs an op on the device that holds the most
	// operand bytes, moving only the smaller side; it never moves an op
	// whose operands share a device.
	MinimizeTransfers = placement.MinimizeTransfers
)

// EnvPlacement is the environment variable that sets the placement policy
// at start-up: explicit (the default), auto, force-gpu, force-cpu or
// minimize-transfers (case, '-' and '_' do not matter, so ForceGPU works
// too). An unknown value is logged and ignored.
const EnvPlacement = placement.Env

// ParsePlacement returns the policy that s names, as EnvPlacement takes it.
func ParsePlacement(s string) (Placement, error) { return placement.Parse(s) }

// SetPlacement sets the process-wide placement policy and returns the
// previous one, so that a caller can restore it.
func SetPlacement(p Placement) Placement {
	if !p.Valid() {
		misuse("SetPlacement", "unknown placement %v", p)
	}
	return placement.Set(p)
}

// CurrentPlacement returns the process-wide placement policy.
func CurrentPlacement() Placement { return placement.Current() }

// SetPlacementGPU sets the accelerator that Auto and ForceGPU move CPU work
// to, and returns the previous setting. nil means no accelerator: work on
// the CPU stays there. Until it is called the accelerator is the GPU that
// Default picks, if it picks one, so software adapters (llvmpipe) are
// accelerators only when set here or named by WEBTENSOR_DEVICE.
func SetPlacementGPU(dev *Device) (previous *Device) {
	if dev != nil && dev.name == cpuBackend {
		misuse("SetPlacementGPU", "the accelerator must not be the CPU")
	}
	return router.SetAccelerator(dev)
}

// PlacementGPU returns the accelerator that Auto and ForceGPU move CPU work
// to, or nil when there is none.
func PlacementGPU() *Device { return router.Accelerator() }

// Never is the threshold of a family in which the GPU never beats the CPU:
// no size reaches it. A software adapter (llvmpipe) has it everywhere.
const Never = placement.Never

// Thresholds are the sizes from which an op of each family runs faster on
// an accelerator than on the CPU backend, counting the upload of host
// operands and the read-back of the result as a user with host data pays
// them. An op is routed to the accelerator when its size is at least its
// family's threshold; Never (-1) means never. cmd/calibrate measures them.
// The fields: Elementwise (output elements), Reduction (input elements),
// MatMul (multiply-adds; conv: of the implicit GEMM), Window (output
// elements × window area: pooling, sampling) and Creation (elements of
// host data: FromFloat32, …).
type Thresholds = placement.Thresholds

// NeverThresholds keeps every op on the CPU.
var NeverThresholds = placement.NeverThresholds

// DefaultThresholds are the thresholds of an uncalibrated adapter by type:
// never for a software or unknown adapter (it runs on the same cores as
// the CPU backend, behind a shader compiler and a driver), and
// conservative ones for a real GPU, so that Auto never makes a program
// slower than the CPU (internal/placement says how they were chosen).
func DefaultThresholds(t hal.AdapterType) Thresholds { return placement.DefaultThresholds(t) }

// ThresholdsFile is the JSON of thresholds.json: thresholds by adapter
// key ([AdapterKey]: name and graphics API), as cmd/calibrate writes them,
// and per adapter a note for people on how they were found. Its Write
// method writes it as indented JSON, creating the directory.
type ThresholdsFile = placement.ThresholdsFile

// ThresholdsFileVersion is the Version that ReadThresholdsFile accepts.
const ThresholdsFileVersion = placement.ThresholdsFileVersion

// ReadThresholdsFile parses a thresholds file.
func ReadThresholdsFile(path string) (ThresholdsFile, error) {
	return placement.ReadThresholdsFile(path)
}

// DefaultThresholdsPath is where thresholds load from at start-up:
// os.UserConfigDir()/webtensor/thresholds.json. A missing file is the
// normal case; a broken one is logged and ignored.
func DefaultThresholdsPath() (string, error) { return placement.DefaultThresholdsPath() }

// LoadThresholds replaces the per-adapter thresholds with those of a file
// that cmd/calibrate wrote. On error nothing changes.
func LoadThresholds(path string) error { return placement.LoadThresholds(path) }

// SetThresholds makes t the thresholds of every accelerator, over any file
// and the defaults, until ResetThresholds.
func SetThresholds(t Thresholds) { placement.SetThresholds(t) }

// ResetThresholds drops what SetThresholds set.
func ResetThresholds() { placement.ResetThresholds() }

// ThresholdsFor returns the thresholds in force for an accelerator: those
// of SetThresholds, else the loaded file's entry for its AdapterKey, else
// DefaultThresholds for its adapter type.
func ThresholdsFor(dev *Device) Thresholds { return placement.ThresholdsFor(dev.info) }

// AdapterKey names an adapter wherever adapters are keyed (thresholds
// files, caches): its name and graphics API, as "llvmpipe (LLVM 15.0.6,
// 256 bits) [vulkan]". The name alone does not tell adapters apart: Mesa's
// lavapipe (Vulkan) and llvmpipe (OpenGL ES) give the same one.
func AdapterKey(info hal.Info) string { return placement.AdapterKey(info) }

// PlacementCounters say what placement did since the last
// ResetPlacementStats. Ops counted are the routed ops of every policy but
// Explicit, which routes nothing. The fields: Ops (routed ops by the name
// of the device they ran on), Moves and BytesMoved (operands copied to
// another device, and their bytes), KeptOnCPU (host data for a GPU that
// Auto kept on the CPU) and OOMFallbacks (ops that ran out of GPU memory
// and ran again on the CPU; their copies count in Moves and BytesMoved,
// the rerun in Ops).
type PlacementCounters = placement.Counters

// PlacementStats returns the placement counters.
func PlacementStats() PlacementCounters { return router.Stats() }

// ResetPlacementStats zeroes the placement counters.
func ResetPlacementStats() { router.ResetStats() }

// family groups ops whose CPU/GPU crossover has one size measure; each has
// its own threshold.
type family = placement.Family

const (
	familyElementwise = placement.Elementwise // output elements
	familyReduction   = placement.Reduction   // input elements
	familyMatMul      = placement.MatMul      // multiply-adds
	familyWindow      = placement.Window      // output elements × window area
	familyCreation    = placement.Creation    // elements of new host data
)

// router places this package's ops.
var router = placement.NewRouter[*Device, *Tensor](placementHost{})

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

// routed is the entry of a public op: see placement.Router.Routed. run
// must read its operands through ps's variables and must not route again.
func routed(op string, fam family, size int64, run func() *Tensor, ps ...**Tensor) *Tensor {
	return router.Routed(op, fam, size, run, ps...)
}

// routeList places a list of operands (Concat, Stack): see
// placement.Router.RouteList. It never writes to ts.
func routeList(op string, ts []*Tensor) (placed, moved []*Tensor) {
	return router.RouteList(op, ts, sizable)
}

// routeInPlace places an op that writes into the operands written: see
// placement.Router.RouteInPlace.
func routeInPlace(op string, written []*Tensor, ps ...**Tensor) (moved []*Tensor) {
	return router.RouteInPlace(op, written, ps...)
}

// placeNew is where host data for dev goes under the placement policy: n
// is its element count (see placement.Router.PlaceNew). Ops inside the
// package that make host data for their own use (Pad's index vector) call
// fromHost, not this.
func placeNew(dev *Device, dtype DType, n int) *Device { return router.PlaceNew(dev, dtype, n) }

// placementHost gives the router what it needs of the package beyond the
// public methods of Device and Tensor.
type placementHost struct{}

func (placementHost) CPU() *Device                { return cpuDevice() }
func (placementHost) DefaultAccelerator() *Device { return defaultAccelerator() }
func (placementHost) Failure(t *Tensor) error     { return t.err }

func (placementHost) Holds(dev *Device, dtype DType) bool {
	return dev.caps().Supports(hal.KernelCopy, dtype)
}

func (placementHost) CheckLive(op string, t *Tensor) { t.checkLive(op) }

func (placementHost) MixedDevices(op, why string, a, b *Tensor) {
	misuse(op, "tensors on different devices: %s on %s vs %s on %s (%s)",
		nnDescribe(a), a.dev.Name(), nnDescribe(b), b.dev.Name(), why)
}

func (placementHost) RetractOOM(dev *Device, op string, failure error) {
	dev.retractOOM(op, failure)
}

// retractOOM forgets the device's recorded failures that an op which ran
// again elsewhere caused (placement's out-of-memory fallback): failure,
// which its result carries, and any other out-of-memory failure named
// after op (a composite op's independent steps can each run out: the
// failures of its steps carry its name). A failure recorded after them
// takes their place.
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

// cpuDevice is the CPU backend, which always opens.
var cpuDevice = sync.OnceValue(func() *Device {
	dev, err := Open(cpuBackend)
	if err != nil {
		panic(&Error{Op: "placement", Msg: "cannot open the CPU backend", Err: err})
	}
	return dev
})
