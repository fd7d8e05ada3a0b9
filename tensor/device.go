package tensor

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/hal"
)

// Backend names that the device-selection rules know about.
const (
	cpuBackend    = "cpu"
	webgpuBackend = "webgpu"
)

// Device is an opened adapter: the CPU backend or one WebGPU adapter.
// Devices are process-wide: Open returns the same *Device for the same
// name, and they are never closed.
type Device struct {
	name         string
	hal          backend // the backend device, wrapped in device-loss recovery
	info         hal.Info
	capabilities hal.Capabilities // what hal declared at Open; it does not change

	mu sync.Mutex
	// sticky is the first device failure an op recorded that no read or
	// Sync has reported yet; see Sync. Despite the name it does not stick:
	// it is forgotten once reported.
	sticky error
	// next is the failure recorded after sticky, which takes its place
	// when placement retracts sticky (an out-of-memory op it reran on
	// the CPU; see retractOOM) or a read reports sticky.
	next error

	// checked holds the (op, dtype) pairs checkOp has passed, so that a
	// small op's check is one map read instead of the op table's lock and
	// a kernel list built anew: the capabilities never change.
	checkedMu sync.RWMutex
	checked   map[opDType]struct{}
}

// backend is the hal.Device a Device runs on, wrapped in device-loss
// recovery (internal/recovery.Device; see lost.go). It is the only way the
// rest of the package reaches recovery: besides hal.Device it allocates
// buffers that remember their backend device, tells which of those died
// with a lost one, and reports each loss once.
type backend interface {
	hal.Device
	// AllocOwned is Alloc that also returns the backend device that owns
	// the buffer (a storage frees its buffer there, which after a loss is
	// no longer the current one).
	AllocOwned(size int64) (owner hal.Device, b hal.Buffer, err error)
	// BufferLost reports whether owner was lost, and its loss.
	BufferLost(owner hal.Device) (cause error, lost bool)
	// Recovers reports whether err is a loss the device recovers from,
	// which Sync reports once (TakeLoss) rather than as an op's failure.
	Recovers(err error) bool
	// TakeLoss returns the loss Sync has not reported yet, once.
	TakeLoss() error
	// Generation counts the losses, LastLoss returns the latest, and
	// SimulateLoss loses the backend device on purpose (ForceLoss).
	Generation() int
	LastLoss() error
	SimulateLoss(message string) error
}

type opDType struct {
	op    string
	dtype DType
}

var openDevices struct {
	sync.Mutex
	byName map[string]*Device
}

// Open opens a device by name: "cpu", "webgpu" (meaning "webgpu:0") or
// "webgpu:N" for the Nth adapter of Adapters. Any other registered backend
// is reachable the same way, as "name" or "name:N". Opening a name twice
// returns the same *Device. Errors from the backend are wrapped, so
// errors.Is(err, hal.ErrLibraryNotFound) etc. work.
func Open(name string) (*Device, error) {
	backend, index, err := parseDeviceName(name)
	if err != nil {
		return nil, err
	}
	canonical := deviceName(backend, index)

	// Holding the lock across the backend's Open keeps two goroutines
	// from opening the same adapter twice.
	openDevices.Lock()
	defer openDevices.Unlock()
	if d, ok := openDevices.byName[canonical]; ok {
		return d, nil
	}
	b, ok := hal.Lookup(backend)
	if !ok {
		return nil, &Error{Op: "Open", Msg: fmt.Sprintf("unknown device %q (registered backends: %s)", name, registeredBackends())}
	}
	hd, err := b.Open(index)
	if err != nil {
		return nil, &Error{Op: "Open", Msg: strconv.Quote(canonical), Err: err}
	}
	d := newDevice(canonical, hd)
	if openDevices.byName == nil {
		openDevices.byName = make(map[string]*Device)
	}
	openDevices.byName[canonical] = d
	return d, nil
}

func newDevice(name string, hd hal.Device) *Device {
	d := &Device{name: name, info: hd.Info(), capabilities: hd.Capabilities()}
	d.hal = recovering(d, hd)
	return d
}

// caps is the device's kernel table, read without copying.
func (d *Device) caps() hal.Capabilities { return d.capabilities }

// Capabilities lists the hal kernels and dtypes the device runs, as the
// backend declares them. [Supports] answers the same question per tensor
// operation.
func (d *Device) Capabilities() hal.Capabilities { return maps.Clone(d.capabilities) }

// parseDeviceName splits "backend[:index]". It checks the syntax only;
// whether the backend and adapter exist is Open's business.
func parseDeviceName(name string) (backend string, index int, err error) {
	backend, num, hasIndex := strings.Cut(name, ":")
	if backend == "" {
		return "", 0, &Error{Op: "Open", Msg: fmt.Sprintf("invalid device name %q: want \"cpu\", \"webgpu\" or \"webgpu:N\"", name)}
	}
	if !hasIndex {
		return backend, 0, nil
	}
	index, convErr := strconv.Atoi(num)
	if convErr != nil || index < 0 {
		return "", 0, &Error{Op: "Open", Msg: fmt.Sprintf("invalid adapter index %q in device name %q: want a number ≥ 0", num, name)}
	}
	return backend, index, nil
}

// deviceName is the canonical name of an adapter. The CPU backend has a
// single adapter, so it goes without an index; GPUs always carry one
// because there may be several.
func deviceName(backend string, index int) string {
	if backend == cpuBackend && index == 0 {
		return cpuBackend
	}
	return backend + ":" + strconv.Itoa(index)
}

func registeredBackends() string {
	var names []string
	for _, b := range hal.Backends() {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// Name returns the canonical device name, e.g. "cpu" or "webgpu:0".
func (d *Device) Name() string { return d.name }

// Info describes the adapter behind the device.
func (d *Device) Info() hal.Info { return d.info }

// Stats returns a snapshot of the device counters.
func (d *Device) Stats() hal.Stats { return d.hal.Stats() }

// ResetPeakLiveBytes restarts Stats().PeakLiveBytes from the bytes live
// now, as torch.cuda.reset_peak_memory_stats: reset, run a pass, read the
// peak.
func (d *Device) ResetPeakLiveBytes() { d.hal.ResetPeakLiveBytes() }

// Sync waits for every operation issued so far. Operations do not return
// errors, so this is where their failures surface: Sync returns the
// failures that operations recorded on this device, and those the device
// reports (an out-of-range index on a GPU), since the last Sync — each
// once. A failure that a read already returned (reading the failed tensor,
// or the read that the device's report came with) is not returned again.
// After a failure the device keeps working: the next Sync returns nil
// unless something failed again. The failed tensor itself keeps its
// error, which every read of it returns. A device loss is reported once
// too, by the first Sync after it (see Lost).
func (d *Device) Sync() error {
	err := d.hal.Sync()
	recorded := d.takeRecorded()
	if loss := d.hal.TakeLoss(); loss != nil {
		// A device loss is reported once (see lost.go); err is the loss
		// too, as the lost backend device saw it.
		return joinErrs(loss, recorded)
	}
	if err == nil {
		return recorded
	}
	return joinErrs(recorded, &Error{Op: "Sync", Msg: "on " + d.name, Err: err})
}

// Flush hands every operation issued so far to the device and returns
// without waiting for them: the GPU starts on the work while the caller
// goes on issuing more. Tensors released after Flush are still computed
// and stored by it, where a WebGPU device's lazy engine would otherwise
// skip the stores of results released unread before they ran (a loop
// that keeps a few results alive, as bench does, calls Flush before
// releasing them so that every iteration's work really runs). It does not
// report the operations' failures (Sync does); it fails only when the
// device cannot take work, closed or lost. On the CPU, whose operations
// run when they are called, it does nothing.
func (d *Device) Flush() error {
	f, ok := d.backendDevice().(hal.Flusher)
	if !ok {
		return nil
	}
	if err := f.Flush(); err != nil {
		return &Error{Op: "Flush", Msg: "on " + d.name, Err: err}
	}
	return nil
}

// joinErrs is errors.Join that returns a lone error as it is, so that
// errors.As and == see it unwrapped.
func joinErrs(errs ...error) error {
	var kept []error
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	if len(kept) == 1 {
		return kept[0]
	}
	return errors.Join(kept...)
}

// takeRecorded returns the failures recorded since they were last taken
// or reported, and forgets them.
func (d *Device) takeRecorded() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	first, second := d.sticky, d.next
	d.sticky, d.next = nil, nil
	return joinErrs(first, second)
}

// reported forgets err, which a read has just returned to its caller, as
// a failure for Sync to report: each failure is reported once.
func (d *Device) reported(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch err {
	case d.sticky:
		d.sticky, d.next = d.next, nil
	case d.next:
		d.next = nil
	}
}

func (d *Device) String() string {
	if d == nil {
		return "<nil device>"
	}
	// Skip details the name already says, so the CPU reads "cpu (Go CPU …)"
	// and a GPU "webgpu:0 (NVIDIA H100, vulkan, discrete)".
	backend, _, _ := strings.Cut(d.name, ":")
	details := []string{d.info.Name}
	for _, s := range []string{d.info.Backend, d.info.Type.String()} {
		if s != "" && s != backend && s != hal.AdapterUnknown.String() {
			details = append(details, s)
		}
	}
	return d.name + " (" + strings.Join(details, ", ") + ")"
}

// recordFailure remembers a device failure so that Sync reports it even if
// the tensor that carried it was never read.
func (d *Device) recordFailure(err error) {
	if d.hal.Recovers(err) {
		return // the device recovers instead; see lost.go
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sticky == nil {
		d.sticky = err
	} else if d.next == nil {
		d.next = err
	}
}

// fail wraps a device failure of op, records it and returns it for the
// tensor that the op was producing.
func (d *Device) fail(op string, err error) error {
	e := &Error{Op: op, Msg: "on " + d.name, Err: err}
	d.recordFailure(e)
	return e
}
