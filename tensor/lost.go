package tensor

import (
	"fmt"
	"slices"
	"sync"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/recovery"
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
// The mechanism is package internal/recovery: a hal.Device decorator that
// every Device's backend device is wrapped in (recovering, below). This
// file is the package's whole contact with it besides the backend
// interface of device.go: the public API of device loss, and the errors
// of tensors that died with their backend device.

// recovering wraps hd, the backend device that Open opened for d, in
// device-loss recovery.
func recovering(d *Device, hd hal.Device) backend {
	return recovery.New(hd, recovery.Config{
		Name:  d.name,
		Label: d.String(),
		Wrap:  func(op, msg string, err error) error { return &Error{Op: op, Msg: msg, Err: err} },
		OnRecover: func(e recovery.Event) {
			fireLost(LostEvent{Device: d, Err: e.Err, Generation: e.Generation, Replacement: e.Replacement})
		},
	})
}

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
func (d *Device) Lost() bool { return d.hal.Generation() > 0 }

// LostErr returns the latest loss of the device (a *Error wrapping
// hal.ErrDeviceLost), or nil if it never lost its backend device.
func (d *Device) LostErr() error { return d.hal.LastLoss() }

// Generation counts the device's losses: 0 while it runs on the backend
// device Open made. Tensors made in one generation are lost in the next.
func (d *Device) Generation() int { return d.hal.Generation() }

// ForceLoss makes the backend lose the device on purpose, as a driver
// reset would, to test recovery code: the loss is then noticed like a real
// one, by the next operation, read, Sync or Lost. Backends that cannot
// simulate a loss (the CPU, wgpu-native) return an *Error wrapping
// hal.ErrUnsupported.
func (d *Device) ForceLoss(message string) error {
	if err := d.hal.SimulateLoss(message); err != nil {
		return &Error{Op: "ForceLoss", Msg: "on " + d.String(), Err: err}
	}
	return nil
}

// lostErr returns a *Error naming op, t's shape and dtype and its device
// when t's buffer lived on a backend device that was lost, else nil. When
// the current backend device has just been lost, it recovers first.
func (t *Tensor) lostErr(op string) error {
	if t == nil || t.st == nil {
		return nil
	}
	cause, lost := t.dev.hal.BufferLost(t.st.dev)
	if !lost {
		return nil
	}
	return &Error{
		Op:  op,
		Msg: fmt.Sprintf("%v %v on %v: the tensor lived on a backend device that was lost; restore it (from a checkpoint) on the recovered device", t.shape, t.dtype, t.dev),
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
