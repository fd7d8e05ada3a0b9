package tensor

import (
	"errors"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// backendSwitch is the hal.Device a Device talks to. It forwards every
// call to the current backend device (a generation) and watches the
// answers: an error wrapping hal.ErrDeviceLost makes the Device replace
// the generation (recover, in lost.go). Swapping one atomic pointer, rather
// than the Device's hal field, keeps every op's lock-free read of d.hal
// race-free while a recovery happens on another goroutine.
type backendSwitch struct {
	dev *Device
	cur atomic.Pointer[generation]
}

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

var _ hal.Device = (*backendSwitch)(nil)

func (s *backendSwitch) current() *generation { return s.cur.Load() }

// check passes err through, recovering first when it reports that g was
// lost and the backend confirms it. A backend that cannot tell (no Lost
// method) is never replaced: its ErrDeviceLost may be a passing failure,
// and it stays a sticky failure of the device as before.
func (s *backendSwitch) check(g *generation, err error) error {
	if err != nil && errors.Is(err, hal.ErrDeviceLost) && g.isLost() {
		s.dev.recover(g, err)
	}
	return err
}

func (s *backendSwitch) Info() hal.Info                 { return s.current().hd.Info() }
func (s *backendSwitch) Capabilities() hal.Capabilities { return s.current().hd.Capabilities() }
func (s *backendSwitch) Stats() hal.Stats               { return s.current().hd.Stats() }

// Alloc allocates on the current generation. Allocation is where new work
// starts, so a loss seen here is recovered from and the allocation retried
// once on the new device: new tensors keep working.
func (s *backendSwitch) Alloc(size int64) (hal.Buffer, error) {
	_, b, err := s.alloc(size)
	return b, err
}

// alloc is Alloc that also returns the device that owns the buffer, which
// a storage must free it to.
func (s *backendSwitch) alloc(size int64) (hal.Device, hal.Buffer, error) {
	g := s.current()
	if g.isLost() {
		s.dev.recover(g, nil)
		g = s.current()
	}
	b, err := g.hd.Alloc(size)
	if err != nil && errors.Is(err, hal.ErrDeviceLost) && g.isLost() {
		s.dev.recover(g, err)
		g = s.current()
		b, err = g.hd.Alloc(size)
	}
	return g.hd, b, err
}

// Free is never reached through the switch: a storage frees its buffer
// to the generation that allocated it. Forwarding keeps the interface
// honest; a backend ignores buffers that are not its own.
func (s *backendSwitch) Free(b hal.Buffer) { s.current().hd.Free(b) }

func (s *backendSwitch) Write(dst hal.Buffer, src []byte) error {
	g := s.current()
	return s.check(g, g.hd.Write(dst, src))
}

func (s *backendSwitch) Read(src hal.Buffer, dst []byte) error {
	g := s.current()
	return s.check(g, g.hd.Read(src, dst))
}

func (s *backendSwitch) Fill(dst hal.View, start, step float64) error {
	g := s.current()
	return s.check(g, g.hd.Fill(dst, start, step))
}

func (s *backendSwitch) Random(dst hal.View, dist hal.Distribution, p float64, seed, offset uint64) error {
	g := s.current()
	return s.check(g, g.hd.Random(dst, dist, p, seed, offset))
}

func (s *backendSwitch) Copy(dst, src hal.View) error {
	g := s.current()
	return s.check(g, g.hd.Copy(dst, src))
}

func (s *backendSwitch) Unary(op hal.UnaryOp, dst, src hal.View, args hal.Args) error {
	g := s.current()
	return s.check(g, g.hd.Unary(op, dst, src, args))
}

func (s *backendSwitch) Binary(op hal.BinaryOp, dst, a, b hal.View) error {
	g := s.current()
	return s.check(g, g.hd.Binary(op, dst, a, b))
}

func (s *backendSwitch) Where(dst, cond, a, b hal.View) error {
	g := s.current()
	return s.check(g, g.hd.Where(dst, cond, a, b))
}

func (s *backendSwitch) Reduce(op hal.ReduceOp, dst, src hal.View, reduced int) error {
	g := s.current()
	return s.check(g, g.hd.Reduce(op, dst, src, reduced))
}

func (s *backendSwitch) MatMul(dst, a, b hal.View, alpha, beta float64) error {
	g := s.current()
	return s.check(g, g.hd.MatMul(dst, a, b, alpha, beta))
}

func (s *backendSwitch) Gather(dst, src, index hal.View, axis int) error {
	g := s.current()
	return s.check(g, g.hd.Gather(dst, src, index, axis))
}

func (s *backendSwitch) ScatterAdd(dst, index, src hal.View, axis int) error {
	g := s.current()
	return s.check(g, g.hd.ScatterAdd(dst, index, src, axis))
}

func (s *backendSwitch) Im2Col(dst, src hal.View, w hal.Window) error {
	g := s.current()
	return s.check(g, g.hd.Im2Col(dst, src, w))
}

func (s *backendSwitch) Col2Im(dst, src hal.View, w hal.Window) error {
	g := s.current()
	return s.check(g, g.hd.Col2Im(dst, src, w))
}

func (s *backendSwitch) Pool2D(op hal.PoolOp, dst, indices, src hal.View, w hal.Window, countIncludePad bool) error {
	g := s.current()
	return s.check(g, g.hd.Pool2D(op, dst, indices, src, w, countIncludePad))
}

func (s *backendSwitch) GridSample(dst, src, grid hal.View, padding hal.GridPadding, alignCorners bool) error {
	g := s.current()
	return s.check(g, g.hd.GridSample(dst, src, grid, padding, alignCorners))
}

func (s *backendSwitch) Conv2D(dst, src, weight hal.View, w hal.Window, groups int) error {
	g := s.current()
	return s.check(g, g.hd.Conv2D(dst, src, weight, w, groups))
}

func (s *backendSwitch) Softmax(dst, src hal.View, log bool) error {
	g := s.current()
	return s.check(g, g.hd.Softmax(dst, src, log))
}

func (s *backendSwitch) Step(op hal.Optimizer, param, grad hal.View, state []hal.View, scale hal.View, a hal.StepArgs) error {
	g := s.current()
	return s.check(g, g.hd.Step(op, param, grad, state, scale, a))
}

// Sync polls the backend's loss flag first: a loss with no work pending
// would otherwise go unnoticed until the next allocation.
func (s *backendSwitch) Sync() error {
	g := s.current()
	err := g.hd.Sync()
	if err == nil && g.isLost() {
		err = &Error{Op: "Sync", Msg: "on " + s.dev.name, Err: hal.ErrDeviceLost}
	}
	return s.check(g, err)
}

// Close closes the current generation. Devices are never closed today;
// lost generations are left to the backend (see recover).
func (s *backendSwitch) Close() error { return s.current().hd.Close() }
