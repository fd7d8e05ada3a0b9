package recovery

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/webtensor/webtensor/backend/cpu"
	"github.com/webtensor/webtensor/hal"
)

// losable is a CPU device that can be lost as a GPU can: once lost, every
// call that returns an error fails with hal.ErrDeviceLost, and Lost says
// so.
type losable struct {
	hal.Device
	id   int
	lost atomic.Bool
	why  string
}

func (d *losable) Lost() bool { return d.lost.Load() }

func (d *losable) ForceLoss(message string) error {
	d.why = message
	d.lost.Store(true)
	return nil
}

func (d *losable) LostErr() error {
	if !d.lost.Load() {
		return nil
	}
	return errors.Join(hal.ErrDeviceLost, errors.New(d.why))
}

func (d *losable) Alloc(size int64) (hal.Buffer, error) {
	if d.lost.Load() {
		return nil, hal.ErrDeviceLost
	}
	return d.Device.Alloc(size)
}

func (d *losable) Fill(dst hal.View, start, step float64) error {
	if d.lost.Load() {
		return hal.ErrDeviceLost
	}
	return d.Device.Fill(dst, start, step)
}

// opened counts the losable devices the test backend opened.
var opened atomic.Int32

func init() {
	hal.Register(hal.Backend{
		Name:     "losable",
		Adapters: func() ([]hal.Info, error) { return []hal.Info{{Name: "losable", Backend: "losable"}}, nil },
		Open: func(index int) (hal.Device, error) {
			return &losable{Device: cpu.New(), id: int(opened.Add(1))}, nil
		},
	})
}

func TestRecoverReplacesTheLostDevice(t *testing.T) {
	b, _ := hal.Lookup("losable")
	first, err := b.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	d := New(first, Config{Name: "losable:0", Label: "losable:0 (test)", OnRecover: func(e Event) { events = append(events, e) }})

	owner, buf, err := d.AllocOwned(16)
	if err != nil || owner != first {
		t.Fatalf("AllocOwned on the first generation: owner %v, err %v", owner, err)
	}
	if cause, lost := d.BufferLost(owner); lost || cause != nil {
		t.Fatalf("a live buffer reads as lost: %v", cause)
	}
	if g := d.Generation(); g != 0 {
		t.Fatalf("Generation before a loss = %d, want 0", g)
	}

	if err := d.SimulateLoss("unit test reset"); err != nil {
		t.Fatal(err)
	}
	// A kernel call on the lost device fails with the loss and recovers.
	err = d.Fill(hal.Contiguous(buf, hal.Float32, 4), 0, 1)
	if !errors.Is(err, hal.ErrDeviceLost) {
		t.Fatalf("Fill on the lost device: %v, want ErrDeviceLost", err)
	}
	if d.Current() == first {
		t.Fatal("the lost device is still current")
	}
	if got := d.Current().(*losable).id; got != 2 {
		t.Fatalf("replacement is losable #%d, want #2 (the same adapter reopened)", got)
	}
	if len(events) != 1 || events[0].Generation != 1 || !errors.Is(events[0].Err, hal.ErrDeviceLost) {
		t.Fatalf("OnRecover events = %+v, want one of generation 1 wrapping ErrDeviceLost", events)
	}
	cause, lost := d.BufferLost(owner)
	if !lost || !errors.Is(cause, hal.ErrDeviceLost) || cause.Error() == hal.ErrDeviceLost.Error() {
		t.Fatalf("BufferLost of the old generation = %v, %v; want the backend's account of the loss", cause, lost)
	}
	if !d.Recovers(err) {
		t.Fatal("Recovers(ErrDeviceLost) = false on a device that recovers")
	}
	if err := d.TakeLoss(); !errors.Is(err, hal.ErrDeviceLost) {
		t.Fatalf("first TakeLoss = %v, want the loss", err)
	}
	if err := d.TakeLoss(); err != nil {
		t.Fatalf("second TakeLoss = %v, want nil: a loss is reported once", err)
	}
	if g := d.Generation(); g != 1 {
		t.Fatalf("Generation after one loss = %d, want 1", g)
	}
	if err := d.LastLoss(); err != events[0].Err {
		t.Fatalf("LastLoss = %v, want the event's %v", err, events[0].Err)
	}

	// New work runs on the replacement.
	owner2, _, err := d.AllocOwned(16)
	if err != nil || owner2 != d.Current() {
		t.Fatalf("AllocOwned after recovery: owner %v, err %v", owner2, err)
	}
	if len(events) != 1 {
		t.Fatalf("%d recoveries for one loss", len(events))
	}
}

// A backend that cannot report loss (no Lost method: the CPU) is never
// replaced, and its ErrDeviceLost is a failure like any other.
func TestNoRecoveryWithoutLossFlag(t *testing.T) {
	inner := cpu.New()
	d := New(inner, Config{Name: "cpu"})
	if d.Recovers(hal.ErrDeviceLost) {
		t.Fatal("the CPU device claims to recover")
	}
	if err := d.SimulateLoss("x"); !errors.Is(err, hal.ErrUnsupported) {
		t.Fatalf("SimulateLoss on the CPU = %v, want ErrUnsupported", err)
	}
	if d.Generation() != 0 || d.Current() != inner {
		t.Fatal("the CPU device was replaced")
	}
}
