// Package recovery keeps a hal.Device usable after the backend device
// behind it is lost: a driver reset, a GPU removed, a watchdog killing a
// kernel.
//
// [Device] is a decorator around a hal.Device. It forwards every call to
// the current backend device (a generation) and watches the answers: an
// error wrapping hal.ErrDeviceLost, confirmed by the backend's own loss
// flag, makes it open a replacement (the same adapter, else the best other
// adapter of the same backend, else the CPU) and switch to it. Buffers of
// the lost generation stay lost; [Device.BufferLost] names the loss they
// died with, so that the caller can fail their use with that cause.
//
// The package sits below tensor and knows nothing of tensors: tensor wraps
// every backend device it opens in a Device and reaches recovery only
// through the interface it declares for its backend (see tensor's
// device.go), and through its device-loss API (Device.Lost, LostErr,
// Generation, ForceLoss, OnDeviceLost) in tensor/lost.go. Errors are made
// by the caller's [Config.Wrap], so that they are tensor's *Error.
//
// The forwarding methods of hal.Device are generated (forward.go, by
// go generate; forwardgen's test fails when they are stale): a method
// added to hal.Device needs no hand-written forwarder here. Methods that
// need more than forwarding (Alloc, Sync, Close) are written by hand in
// this file, and the generator skips them.
//
// The lost backend device is not closed: operations that were already
// inside it on other goroutines finish against it (failing with
// hal.ErrDeviceLost) rather than against freed native objects.
package recovery

//go:generate go run ./forwardgen

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// Config says how a Device reopens and reports.
type Config struct {
	// Name is the device's canonical name, "backend" or "backend:index":
	// the adapter it was opened on, which a replacement is looked for on
	// first.
	Name string
	// Label names the device in errors ("webgpu:0 (llvmpipe, vulkan, cpu)").
	Label string
	// Wrap makes an error of op with message msg that wraps err; nil means
	// fmt.Errorf("op: msg: err").
	Wrap func(op, msg string, err error) error
	// OnRecover runs after each recovery, on the goroutine that noticed the
	// loss, holding no lock of this package; nil for none.
	OnRecover func(Event)
}

// Event describes one recovery.
type Event struct {
	// Err says why: the loss, wrapping hal.ErrDeviceLost and the
	// backend's message.
	Err error
	// Generation counts the losses: 1 after the first.
	Generation int
	// Replacement describes the adapter the device now runs on.
	Replacement hal.Info
}

// Device is a hal.Device that replaces its backend device when it is lost.
// Swapping one atomic pointer keeps every caller's lock-free read of the
// current generation race-free while a recovery happens on another
// goroutine.
type Device struct {
	cfg Config
	cur atomic.Pointer[generation]

	mu      sync.Mutex    // guards the loss record below and serializes recovery
	retired []*generation // lost generations, oldest first
	causes  []error       // the loss of each retired generation
	last    error         // the latest loss, as LastLoss reports it
	pending error         // a loss TakeLoss has not returned yet
}

var _ hal.Device = (*Device)(nil)

// generation is one backend device a Device has run on.
type generation struct {
	hd hal.Device
	n  int // 0 for the device Open made, +1 per recovery
	// lost polls the backend's own loss flag, when it has one (WebGPU);
	// nil for backends that cannot be lost (the CPU).
	lost func() bool
}

func newGeneration(hd hal.Device, n int) *generation {
	g := &generation{hd: hd, n: n}
	if l, ok := hd.(interface{ Lost() bool }); ok {
		g.lost = l.Lost
	}
	return g
}

// isLost reports whether the backend has flagged itself lost, with one
// atomic load on WebGPU.
func (g *generation) isLost() bool { return g.lost != nil && g.lost() }

// New wraps hd, the backend device that cfg's adapter opened.
func New(hd hal.Device, cfg Config) *Device {
	if cfg.Wrap == nil {
		cfg.Wrap = func(op, msg string, err error) error { return fmt.Errorf("%s: %s: %w", op, msg, err) }
	}
	d := &Device{cfg: cfg}
	d.cur.Store(newGeneration(hd, 0))
	return d
}

func (d *Device) current() *generation { return d.cur.Load() }

// Current is the backend device the Device runs on now.
func (d *Device) Current() hal.Device { return d.current().hd }

// check passes err through, recovering first when it reports that g was
// lost and the backend confirms it. A backend that cannot tell (no Lost
// method) is never replaced: its ErrDeviceLost may be a passing failure,
// and it stays a failure of the device as any other.
func (d *Device) check(g *generation, err error) error {
	if err != nil && errors.Is(err, hal.ErrDeviceLost) && g.isLost() {
		d.recover(g, err)
	}
	return err
}

// Alloc allocates on the current generation; see AllocOwned.
func (d *Device) Alloc(size int64) (hal.Buffer, error) {
	_, b, err := d.AllocOwned(size)
	return b, err
}

// AllocOwned is Alloc that also returns the backend device that owns the
// buffer, which the buffer must be freed to: after a loss it is no longer
// the current one. Allocation is where new work starts, so a loss seen
// here is recovered from and the allocation retried once on the new
// device: new tensors keep working.
func (d *Device) AllocOwned(size int64) (hal.Device, hal.Buffer, error) {
	g := d.current()
	if g.isLost() {
		d.recover(g, nil)
		g = d.current()
	}
	b, err := g.hd.Alloc(size)
	if err != nil && errors.Is(err, hal.ErrDeviceLost) && g.isLost() {
		d.recover(g, err)
		g = d.current()
		b, err = g.hd.Alloc(size)
	}
	return g.hd, b, err
}

// Sync polls the backend's loss flag first: a loss with no work pending
// would otherwise go unnoticed until the next allocation.
func (d *Device) Sync() error {
	g := d.current()
	err := g.hd.Sync()
	if err == nil && g.isLost() {
		err = d.cfg.Wrap("Sync", "on "+d.cfg.Label, hal.ErrDeviceLost)
	}
	return d.check(g, err)
}

// Close closes the current generation. Lost generations are left to the
// backend (see the package documentation).
func (d *Device) Close() error { return d.current().hd.Close() }

// Generation counts the losses: 0 while the device runs on the backend
// device it was made with. It checks the backend first (one atomic load on
// WebGPU) and recovers if the loss happened since the last operation.
func (d *Device) Generation() int {
	if g := d.current(); g.isLost() {
		d.recover(g, nil)
	}
	return d.current().n
}

// LastLoss returns the latest loss (wrapping hal.ErrDeviceLost), or nil if
// the device was never lost.
func (d *Device) LastLoss() error {
	d.Generation()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// TakeLoss returns the loss that it has not returned yet, once, so that
// the device's Sync reports each loss once.
func (d *Device) TakeLoss() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.pending
	d.pending = nil
	return err
}

// Recovers reports whether err is a device loss that d recovers from.
// Those are not failures of an op for the caller to record: TakeLoss
// reports each loss once instead. Backends that cannot report loss are
// never replaced (see check), so their ErrDeviceLost is a failure as any
// other, and every later call to the dead backend fails again.
func (d *Device) Recovers(err error) bool {
	g := d.current()
	return errors.Is(err, hal.ErrDeviceLost) && (g.lost != nil || g.n > 0)
}

// BufferLost reports whether owner, the backend device that allocated a
// buffer (AllocOwned), was lost, and with which cause. When owner is the
// current backend device and has just been lost, it recovers first.
func (d *Device) BufferLost(owner hal.Device) (cause error, lost bool) {
	g := d.current()
	if owner == g.hd {
		if !g.isLost() {
			return nil, false
		}
		d.recover(g, nil)
	}
	cause = hal.ErrDeviceLost
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, r := range d.retired {
		if r.hd == owner {
			cause = d.causes[i]
		}
	}
	return cause, true
}

// SimulateLoss makes the backend lose the device on purpose, as a driver
// reset would, to test recovery: the loss is then noticed like a real one.
// Backends that cannot simulate a loss return an error wrapping
// hal.ErrUnsupported.
func (d *Device) SimulateLoss(message string) error {
	hd := d.current().hd
	f, ok := hd.(interface{ ForceLoss(string) error })
	if !ok {
		return fmt.Errorf("the %s backend cannot simulate a device loss: %w", hd.Info().Backend, hal.ErrUnsupported)
	}
	return f.ForceLoss(message)
}

// recover replaces generation g, which was found lost (cause may be nil
// when only the backend's flag said so), unless another goroutine already
// did. It never fails: if no replacement opens, g stays current and every
// call keeps failing with hal.ErrDeviceLost.
func (d *Device) recover(g *generation, cause error) {
	d.mu.Lock()
	if d.current() != g {
		d.mu.Unlock()
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
		d.last = d.cfg.Wrap("recover", fmt.Sprintf("%s was lost and no replacement opened (%v)", d.cfg.Label, err), cause)
		d.pending = d.last
		d.mu.Unlock()
		return
	}
	ng := newGeneration(hd, g.n+1)
	d.retired = append(d.retired, g)
	d.causes = append(d.causes, cause)
	lossErr := d.cfg.Wrap("device lost", fmt.Sprintf("%s lost its backend device (generation %d); it now runs on %s", d.cfg.Label, g.n, describe(hd.Info())), cause)
	d.last, d.pending = lossErr, lossErr
	d.cur.Store(ng)
	d.mu.Unlock()
	if d.cfg.OnRecover != nil {
		d.cfg.OnRecover(Event{Err: lossErr, Generation: ng.n, Replacement: hd.Info()})
	}
}

func describe(i hal.Info) string {
	return fmt.Sprintf("%s (%s, %s)", i.Name, i.Backend, i.Type)
}

// cpuBackend is the backend that every lost device falls back to last.
const cpuBackend = "cpu"

// reopen opens the replacement of a lost backend device: the same adapter,
// else the best other adapter of the same backend, else the CPU.
func (d *Device) reopen() (hal.Device, error) {
	backend, num, hasIndex := strings.Cut(d.cfg.Name, ":")
	index := 0
	if hasIndex {
		var err error
		if index, err = strconv.Atoi(num); err != nil || index < 0 {
			return nil, fmt.Errorf("device name %q names no adapter to reopen", d.cfg.Name)
		}
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
