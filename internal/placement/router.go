package placement

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// Device is what a Router needs of a device: *tensor.Device.
type Device interface {
	comparable
	Name() string
	Info() hal.Info
}

// Tensor is what a Router needs of a tensor: *tensor.Tensor, with D its
// device type and T itself.
type Tensor[D Device, T any] interface {
	comparable
	Device() D
	DType() hal.DType
	Len() int
	// To copies the tensor to another device.
	To(D) T
	Release()
}

// Host is what a Router needs from the package whose devices and tensors
// it places and that its public methods do not give.
type Host[D Device, T Tensor[D, T]] interface {
	// CPU is the CPU device, which always opens.
	CPU() D
	// DefaultAccelerator is the GPU that Auto and ForceGPU move work to
	// until SetAccelerator sets one; the zero D for none.
	DefaultAccelerator() D
	// Holds reports whether dev can hold tensors of dtype.
	Holds(dev D, dtype hal.DType) bool
	// CheckLive panics, as misuse of op, unless t is live.
	CheckLive(op string, t T)
	// MixedDevices panics, as misuse of op, for operands a and b on
	// different devices; why says what makes it misuse.
	MixedDevices(op, why string, a, b T)
	// Failure is the device failure that t carries, if any.
	Failure(t T) error
	// RetractOOM forgets the out-of-memory failures that op recorded on
	// dev, failure among them, when op ran again elsewhere.
	RetractOOM(dev D, op string, failure error)
}

// Router places the ops of one tensor package under the process-wide
// policy: tensor makes one, for its *Device and *Tensor.
type Router[D Device, T Tensor[D, T]] struct {
	host        Host[D, T]
	accelerator atomic.Pointer[struct{ dev D }] // nil until SetAccelerator
	stats       struct {
		ops                     sync.Map // D → *atomic.Int64
		moves, bytes, keptOnCPU atomic.Int64
		oomFallbacks            atomic.Int64
	}
}

// NewRouter returns a Router for host's devices and tensors.
func NewRouter[D Device, T Tensor[D, T]](host Host[D, T]) *Router[D, T] {
	return &Router[D, T]{host: host}
}

// SetAccelerator sets the accelerator that Auto and ForceGPU move CPU work
// to, and returns the previous one; the zero D means none.
func (r *Router[D, T]) SetAccelerator(dev D) (previous D) {
	previous = r.Accelerator()
	r.accelerator.Store(&struct{ dev D }{dev})
	return previous
}

// Accelerator returns the accelerator that Auto and ForceGPU move CPU work
// to: the one SetAccelerator set, else the host's default; the zero D for
// none.
func (r *Router[D, T]) Accelerator() D {
	if a := r.accelerator.Load(); a != nil {
		return a.dev
	}
	return r.host.DefaultAccelerator()
}

// Routed is the entry of a public op: it places the operands ps with
// Route, runs run on their device and, when that ran out of GPU memory,
// reruns it on the CPU where the policy allows (see onCPUIfOOM). run must
// read its operands through ps's variables, so that it sees the moved
// copies, and must not route again.
func (r *Router[D, T]) Routed(op string, fam Family, size int64, run func() T, ps ...*T) T {
	defer release(r.Route(op, fam, size, ps...))
	return r.onCPUIfOOM(op, run, ps)
}

// Route decides where op runs under the policy and moves the operands that
// are elsewhere, replacing *p with the copy. It returns the copies, which
// the caller releases once the op is issued. Zero (nil) operands are
// skipped; every other operand must be live. size is the op's size in its
// family's measure. Under Explicit it only checks that the operands share
// a device; then, and whenever the operands already sit where the op runs,
// it allocates nothing.
func (r *Router[D, T]) Route(op string, fam Family, size int64, ps ...*T) (moved []T) {
	return r.route(op, fam, size, nil, ps)
}

// RoutedWhereRuns is Routed for an op that not every device runs (runs
// says which: the linalg kernels, which WebGPU leaves out). Under every
// policy but Explicit, an op whose device of choice does not run it runs
// on the CPU, which runs every op, its operands moved there; under
// Explicit nothing moves and the op's own check refuses it.
func (r *Router[D, T]) RoutedWhereRuns(op string, fam Family, size int64, runs func(D) bool, run func() T, ps ...*T) T {
	defer release(r.route(op, fam, size, runs, ps))
	return r.onCPUIfOOM(op, run, ps)
}

// route is Route, with runs (when not nil) the devices that run the op.
func (r *Router[D, T]) route(op string, fam Family, size int64, runs func(D) bool, ps []*T) (moved []T) {
	policy := Current()
	first, mixed := r.operandDevices(op, ps)
	if policy == Explicit {
		if mixed {
			r.mixedDevices(op, "the Explicit placement moves nothing: copy one with To", ps)
		}
		return nil
	}
	var none D
	if first == none {
		return nil
	}
	target := r.placeOp(policy, fam, size, first, mixed, ps)
	if runs != nil && !runs(target) {
		target = r.host.CPU()
	}
	if (mixed || target != first) && !r.canHold(target, ps) {
		if !mixed {
			r.countOp(first)
			return nil
		}
		// The preferred device cannot hold a dtype: the CPU holds every
		// dtype, so meet there rather than refuse the op.
		target = r.host.CPU()
	}
	r.countOp(target)
	return r.moveTo(target, ps)
}

// RouteInPlace places an op that writes into the operands written (Step,
// BatchNorm's running statistics): under every policy it runs where they
// are, for a write into a copy would be lost, and the read-only operands
// ps move there. Written operands on different devices are misuse, and
// under Explicit so are read-only ones elsewhere. Zero operands are
// skipped; written must hold one that is not.
func (r *Router[D, T]) RouteInPlace(op string, written []T, ps ...*T) (moved []T) {
	var zero T
	var home []*T
	for i := range written {
		if written[i] != zero {
			home = append(home, &written[i])
		}
	}
	dev, mixed := r.operandDevices(op, home)
	if mixed {
		r.mixedDevices(op, "they are written in place", home)
	}
	if Current() == Explicit {
		all := append(home, ps...)
		if _, mixed := r.operandDevices(op, all); mixed {
			r.mixedDevices(op, "the Explicit placement moves nothing: copy one with To", all)
		}
		return nil
	}
	r.countOp(dev)
	var movable []*T
	for _, p := range ps {
		if t := *p; t != zero && r.host.Holds(dev, t.DType()) {
			movable = append(movable, p)
		}
	}
	return r.moveTo(dev, movable)
}

// RouteList is Route for a list of operands (Concat, Stack) of family
// Elementwise, whose size is their total length. It never writes to ts,
// which may be the caller's slice: it returns ts itself when nothing
// moves, else a new slice, and the copies to release. sizable says which
// operands can be measured (nil and released ones cannot; Route reports
// them with the op's message).
func (r *Router[D, T]) RouteList(op string, ts []T, sizable func(T) bool) (placed, moved []T) {
	placed = slices.Clone(ts)
	ps := make([]*T, len(placed))
	var size int64
	for i, t := range placed {
		ps[i] = &placed[i]
		if sizable(t) {
			size += int64(t.Len())
		}
	}
	moved = r.Route(op, Elementwise, size, ps...)
	if moved == nil {
		return ts, nil
	}
	return placed, moved
}

// PlaceNew is where host data for dev goes under the policy: n is its
// element count. Explicit and MinimizeTransfers keep dev; Auto keeps data
// for the accelerator below its creation threshold on the CPU (every op
// places its operands, so the first op that needs it on the GPU moves it);
// the Force policies send it to their device. A device that cannot hold
// dtype keeps what the caller asked for, which then fails (or not) as it
// always did.
func (r *Router[D, T]) PlaceNew(dev D, dtype hal.DType, n int) D {
	var none D
	if dev == none {
		return dev
	}
	target := dev
	switch Current() {
	case Auto:
		if gpu := r.Accelerator(); dev == gpu && !ThresholdsFor(gpu.Info()).Reached(Creation, int64(n)) {
			target = r.host.CPU()
		}
	case ForceCPU:
		target = r.host.CPU()
	case ForceGPU:
		if gpu := r.Accelerator(); gpu != none {
			target = gpu
		}
	}
	if target == dev || !dtype.Valid() || !r.host.Holds(target, dtype) {
		return dev
	}
	if Current() == Auto {
		r.stats.keptOnCPU.Add(1)
	}
	return target
}

// operandDevices checks that the operands are live and returns the device
// of the first and whether any other is elsewhere.
func (r *Router[D, T]) operandDevices(op string, ps []*T) (first D, mixed bool) {
	var zero T
	var none D
	for _, p := range ps {
		t := *p
		if t == zero {
			continue
		}
		r.host.CheckLive(op, t)
		if dev := t.Device(); first == none {
			first = dev
		} else if dev != first {
			mixed = true
		}
	}
	return first, mixed
}

// mixedDevices panics with the misuse of operands on different devices,
// naming the first two that differ; why says what makes it misuse.
func (r *Router[D, T]) mixedDevices(op, why string, ps []*T) {
	var zero T
	first := zero
	for _, p := range ps {
		t := *p
		switch {
		case t == zero:
		case first == zero:
			first = t
		case t.Device() != first.Device():
			r.host.MixedDevices(op, why, first, t)
		}
	}
}

// moveTo copies the operands that are not on dev there, replacing *p, and
// returns the copies.
func (r *Router[D, T]) moveTo(dev D, ps []*T) (moved []T) {
	var zero T
	for _, p := range ps {
		if t := *p; t != zero && t.Device() != dev {
			c := t.To(dev)
			r.countMove(t)
			moved = append(moved, c)
			*p = c
		}
	}
	return moved
}

// placeOp is the policy's choice of device for an op whose operands are
// on first (and elsewhere too when mixed).
func (r *Router[D, T]) placeOp(policy Policy, fam Family, size int64, first D, mixed bool, ps []*T) D {
	var none D
	switch policy {
	case ForceCPU:
		return r.host.CPU()
	case ForceGPU:
		if gpu := r.opAccelerator(ps); gpu != none {
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
	cpu := r.host.CPU()
	if !mixed && first != cpu {
		return first
	}
	gpu := r.opAccelerator(ps)
	if gpu == none || !ThresholdsFor(gpu.Info()).Reached(fam, size) {
		if mixed {
			return heaviest(ps)
		}
		return first
	}
	return gpu
}

// opAccelerator is the GPU an op may move to: one its operands are already
// on, else the process's accelerator.
func (r *Router[D, T]) opAccelerator(ps []*T) D {
	var zero T
	cpu := r.host.CPU()
	for _, p := range ps {
		if t := *p; t != zero && t.Device() != cpu {
			return t.Device()
		}
	}
	return r.Accelerator()
}

// heaviest is the device that holds the most operand bytes (the first
// such in operand order), so that moving the rest costs least.
func heaviest[D Device, T Tensor[D, T]](ps []*T) D {
	var zero T
	var best D
	var bestBytes int64
	for i, p := range ps {
		t := *p
		if t == zero {
			continue
		}
		var bytes int64
		for _, q := range ps[i:] {
			if u := *q; u != zero && u.Device() == t.Device() {
				bytes += tensorBytes[D](u)
			}
		}
		var none D
		if best == none || bytes > bestBytes {
			best, bestBytes = t.Device(), bytes
		}
	}
	return best
}

func tensorBytes[D Device, T Tensor[D, T]](t T) int64 {
	return int64(t.Len()) * int64(t.DType().Size())
}

// canHold reports whether dev can hold every operand's dtype.
func (r *Router[D, T]) canHold(dev D, ps []*T) bool {
	var zero T
	for _, p := range ps {
		if t := *p; t != zero && !r.host.Holds(dev, t.DType()) {
			return false
		}
	}
	return true
}

func release[T interface{ Release() }](ts []T) {
	for _, t := range ts {
		t.Release()
	}
}

// Out of memory on a GPU. The backend has already trimmed its pool and
// retried the allocation once when it reports hal.ErrOutOfMemory. What
// happens next depends on the policy, for every op that Routed places:
//
//   - Auto and MinimizeTransfers copy the operands to the CPU and run the
//     whole op again there (a composite op too: its steps never split);
//     the result lives on the CPU, the GPU's failures that the op
//     recorded are retracted (its Sync does not report them), and the
//     counters count the op in OOMFallbacks and the copies in Moves.
//   - Explicit (the default), ForceGPU and ForceCPU keep the failure.
//
// Ops that are not placed and the ops that write their operands in place
// (RouteInPlace: a rerun elsewhere would write into copies) keep the
// failure under every policy. An operand that already failed fails the op
// anywhere, so it is not rerun.

// onCPUIfOOM returns run's result or, when that failed for want of GPU
// memory and the policy allows (see above), run's result with the
// operands ps replaced by copies on the CPU.
func (r *Router[D, T]) onCPUIfOOM(op string, run func() T, ps []*T) T {
	out := run()
	if !r.fallsBackOnOOM(out, ps) {
		return out
	}
	gpu, failure := out.Device(), r.host.Failure(out)
	out.Release()
	cpu := r.host.CPU()
	var zero T
	var copies []T
	for _, p := range ps {
		if t := *p; t != zero && t.Device() != cpu {
			c := t.To(cpu)
			r.countMove(t)
			copies = append(copies, c)
			*p = c
		}
	}
	defer release(copies)
	r.stats.oomFallbacks.Add(1)
	r.countOp(cpu)
	r.host.RetractOOM(gpu, op, failure)
	return run()
}

// fallsBackOnOOM reports whether out failed for want of memory on a GPU
// in a way that rerunning on the CPU can fix.
func (r *Router[D, T]) fallsBackOnOOM(out T, ps []*T) bool {
	var zero T
	if out == zero {
		return false
	}
	if err := r.host.Failure(out); err == nil || !errors.Is(err, hal.ErrOutOfMemory) {
		return false
	}
	if p := Current(); p != Auto && p != MinimizeTransfers {
		return false
	}
	cpu := r.host.CPU()
	if out.Device() == cpu {
		return false
	}
	for _, p := range ps {
		// An operand that already failed fails the op anywhere.
		if t := *p; t != zero && (r.host.Failure(t) != nil || !r.host.Holds(cpu, t.DType())) {
			return false
		}
	}
	return true
}
