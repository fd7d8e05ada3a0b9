package tensor

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/hal"
)

// Device loss and recovery.
//
// A GPU device can be lost at any time: a driver reset, a GPU removed, a
// watchdog killing a kernel. The backend notices (WebGPU's device-lost
// callback) and fails every later call with hal.ErrDeviceLost. The first
// operation, read, Sync or Lost call that sees this recovers the Device:
//
//   - it opens a new backend device on the same adapter, else on the best
//     other adapter of the same backend (discrete before integrated), else
//     on the CPU;
//   - the *Device keeps its identity: the same value, the same Name and
//     Info, now running on the new backend device underneath. Handles kept
//     by the caller (models, optimizers, data loaders) keep working, so new
//     work proceeds at once. Info still describes the adapter Open chose;
//     LostEvent.Replacement says where the device now runs;
//   - tensors that lived on the lost backend device are lost: their
//     contents are gone. Every use (an op, a read, Err) returns or carries a
//     *Error wrapping hal.ErrDeviceLost that names the op, the tensor's
//     shape and dtype, and the device. Releasing them is still fine;
//   - the hooks registered with OnDeviceLost run once per loss, and the
//     next Sync returns the loss once. LostErr and Generation keep it.
//
// Restoring state is the caller's business: a training loop reloads its
// model and optimizer from its last checkpoint (nn/checkpoint.Load), which
// replaces the lost tensors with new ones on the recovered device.
//
// The lost backend device is not closed: operations that were already
// inside it on other goroutines finish against it (failing with
// hal.ErrDeviceLost) rather than against freed native objects. Its GPU
// memory is gone with it; what stays is host bookkeeping for the tensors
// that were alive at the loss, until they are released.

// LostEvent describes one device loss, after the device has recovered.
type LostEvent struct {
	// Device lost its backend device and now runs on the replacement.
	Device *Device
	// Err says why: a *Error wrapping hal.ErrDeviceLost and the backend's
	// message.
	Err error
	// Generation counts the losses of Device: 1 after the first.
	Generation int
	// Replacement describes the adapter the device now runs on: the same
	// adapter, another one, or the CPU.
	Replacement hal.Info
}

// lossState is a Device's record of its losses, guarded by mu.
type lossState struct {
	mu      sync.Mutex
	retired []*generation // lost generations, oldest first
	causes  []error       // the loss of each retired generation
	last    error         // the latest loss, as LostErr reports it
	pending error         // a loss Sync has not reported yet
}

var lostHooks struct {
	sync.Mutex
	next  int
	hooks map[int]func(LostEvent)
}

// OnDeviceLost registers f to run after any device recovers from a loss,
// once per loss, and returns a function that unregisters it. f runs on the
// goroutine that noticed the loss, after recovery, holding no lock of this
// package: it may use the device (the event's Device already runs on the
// replacement) but should not block for long, since that goroutine is in
// the middle of an operation. A typical hook sets a flag that the
// training loop checks to restore its last checkpoint.
func OnDeviceLost(f func(LostEvent)) (remove func()) {
	lostHooks.Lock()
	defer lostHooks.Unlock()
	if lostHooks.hooks == nil {
		lostHooks.hooks = map[int]func(LostEvent){}
	}
	id := lostHooks.next
	lostHooks.next++
	lostHooks.hooks[id] = f
	return func() {
		lostHooks.Lock()
		defer lostHooks.Unlock()
		delete(lostHooks.hooks, id)
	}
}

func fireLost(e LostEvent) {
	lostHooks.Lock()
	ids := make([]int, 0, len(lostHooks.hooks))
	for id := range lostHooks.hooks {
		ids = append(ids, id)
	}
	slices.Sort(ids) // registration order
	fs := make([]func(LostEvent), len(ids))
	for i, id := range ids {
		fs[i] = lostHooks.hooks[id]
	}
	lostHooks.Unlock()
	for _, f := range fs {
		f(e)
	}
}

// Lost reports whether the device has ever lost its backend device. It
// also checks the backend now (one atomic load on WebGPU) and recovers if
// the loss happened since the last operation, so a loop may call it after
// every step.
func (d *Device) Lost() bool {
	g := d.sw.current()
	if g.isLost() {
		d.recover(g, nil)
	}
	return d.sw.current().n > 0
}

// LostErr returns the latest loss of the device (a *Error wrapping
// hal.ErrDeviceLost), or nil if it never lost its backend device.
func (d *Device) LostErr() error {
	d.Lost()
	d.loss.mu.Lock()
	defer d.loss.mu.Unlock()
	return d.loss.last
}

// Generation counts the device's losses: 0 while it runs on the backend
// device Open made. Tensors made in one generation are lost in the next.
func (d *Device) Generation() int {
	d.Lost()
	return d.sw.current().n
}

// ForceLoss makes the backend lose the device on purpose, as a driver
// reset would, to test recovery code: the loss is then noticed like a real
// one, by the next operation, read, Sync or Lost. Backends that cannot
// simulate a loss (the CPU, wgpu-native) return an *Error wrapping
// hal.ErrUnsupported.
func (d *Device) ForceLoss(message string) error {
	g := d.sw.current()
	f, ok := g.hd.(interface{ ForceLoss(string) error })
	if !ok {
		return &Error{Op: "ForceLoss", Msg: "on " + d.String(), Err: fmt.Errorf("the %s backend cannot simulate a device loss: %w", g.hd.Info().Backend, hal.ErrUnsupported)}
	}
	if err := f.ForceLoss(message); err != nil {
		return &Error{Op: "ForceLoss", Msg: "on " + d.String(), Err: err}
	}
	return nil
}

// recover replaces generation g, which was found lost (cause may be nil
// when only the backend's flag said so), unless another goroutine already
// did. It never fails: if no replacement opens, g stays current and every
// call keeps failing with hal.ErrDeviceLost.
func (d *Device) recover(g *generation, cause error) {
	d.loss.mu.Lock()
	if d.sw.current() != g {
		d.loss.mu.Unlock()
		return
	}
	if c, ok := g.hd.(interface{ LostErr() error }); ok {
		if err := c.LostErr(); err != nil {
			cause = err // the backend's own account names reason and message
		}
	}
	if cause == nil || !errors.Is(cause, hal.ErrDeviceLost) {
		cause = fmt.Errorf("%w: %v", hal.ErrDeviceLost, cause)
	}
	hd, err := d.reopen()
	if err != nil {
		d.loss.last = &Error{Op: "recover", Msg: fmt.Sprintf("%v was lost and no replacement opened (%v)", d, err), Err: cause}
		d.loss.pending = d.loss.last
		d.loss.mu.Unlock()
		return
	}
	ng := newGeneration(hd, g.n+1)
	d.loss.retired = append(d.loss.retired, g)
	d.loss.causes = append(d.loss.causes, cause)
	lossErr := &Error{Op: "device lost", Msg: fmt.Sprintf("%v lost its backend device (generation %d); it now runs on %s", d, g.n, describe(hd.Info())), Err: cause}
	d.loss.last, d.loss.pending = lossErr, lossErr
	d.sw.cur.Store(ng)
	d.loss.mu.Unlock()
	fireLost(LostEvent{Device: d, Err: lossErr, Generation: ng.n, Replacement: hd.Info()})
}

func describe(i hal.Info) string {
	return fmt.Sprintf("%s (%s, %s)", i.Name, i.Backend, i.Type)
}

// reopen opens the replacement of a lost backend device: the same adapter,
// else the best other adapter of the same backend, else the CPU.
func (d *Device) reopen() (hal.Device, error) {
	backend, index, err := parseDeviceName(d.name)
	if err != nil {
		return nil, err
	}
	var why []string
	if b, ok := hal.Lookup(backend); ok {
		if hd, err := b.Open(index); err == nil {
			return hd, nil
		} else {
			why = append(why, fmt.Sprintf("%s:%d: %v", backend, index, err))
		}
		if infos, err := b.Adapters(); err == nil {
			others := make([]int, 0, len(infos))
			for i := range infos {
				if i != index {
					others = append(others, i)
				}
			}
			// Most capable first; ties keep the backend's order.
			slices.SortStableFunc(others, func(x, y int) int { return cmp.Compare(infos[y].Type, infos[x].Type) })
			for _, i := range others {
				hd, err := b.Open(i)
				if err == nil {
					return hd, nil
				}
				why = append(why, fmt.Sprintf("%s:%d: %v", backend, i, err))
			}
		}
	}
	if backend != cpuBackend {
		if b, ok := hal.Lookup(cpuBackend); ok {
			hd, err := b.Open(0)
			if err == nil {
				return hd, nil
			}
			why = append(why, fmt.Sprintf("cpu: %v", err))
		}
	}
	return nil, errors.New(strings.Join(why, "; "))
}

// recovers reports whether err is a device loss that d recovers from.
// Those are not recorded as a failure of an op for Sync to report: Sync
// reports each loss once, from the loss record, instead. Backends that
// cannot report loss are never replaced (see backendSwitch.check), so
// their ErrDeviceLost is recorded as any other failure, and every later
// call to the dead backend fails again.
func (d *Device) recovers(err error) bool {
	g := d.sw.current()
	return errors.Is(err, hal.ErrDeviceLost) && (g.lost != nil || g.n > 0)
}

// takeLoss returns the loss Sync has not reported yet, once.
func (d *Device) takeLoss() error {
	d.loss.mu.Lock()
	defer d.loss.mu.Unlock()
	err := d.loss.pending
	d.loss.pending = nil
	return err
}

// lostErr returns a *Error naming op, t's shape and dtype and its device
// when t's buffer lived on a backend device that was lost, else nil. When
// the current backend device has just been lost, it recovers first.
func (t *Tensor) lostErr(op string) error {
	if t == nil || t.st == nil {
		return nil
	}
	d := t.dev
	g := d.sw.current()
	if t.st.dev == g.hd {
		if !g.isLost() {
			return nil
		}
		d.recover(g, nil)
	}
	cause := error(hal.ErrDeviceLost)
	d.loss.mu.Lock()
	for i, r := range d.loss.retired {
		if r.hd == t.st.dev {
			cause = d.loss.causes[i]
		}
	}
	d.loss.mu.Unlock()
	return &Error{
		Op:  op,
		Msg: fmt.Sprintf("%v %v on %v: the tensor lived on a backend device that was lost; restore it (from a checkpoint) on the recovered device", t.shape, t.dtype, d),
		Err: cause,
	}
}

// inputsErr is firstErr for op, which also fails when an input was lost
// with its device.
func inputsErr(op string, ts ...*Tensor) error {
	for _, t := range ts {
		if err := t.lostErr(op); err != nil {
			return err
		}
	}
	return firstErr(ts...)
}
