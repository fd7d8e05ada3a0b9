package placement

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// The router's decisions on stand-in devices and tensors, without a
// backend: tensor's placement tests check the same through real ops.

type fakeDevice struct {
	name  string
	info  hal.Info
	holds map[hal.DType]bool // nil: every dtype
}

func (d *fakeDevice) Name() string   { return d.name }
func (d *fakeDevice) Info() hal.Info { return d.info }

type fakeTensor struct {
	dev      *fakeDevice
	dtype    hal.DType
	n        int
	err      error
	released bool
}

func (t *fakeTensor) Device() *fakeDevice { return t.dev }
func (t *fakeTensor) DType() hal.DType    { return t.dtype }
func (t *fakeTensor) Len() int            { return t.n }
func (t *fakeTensor) Release()            { t.released = true }
func (t *fakeTensor) To(d *fakeDevice) *fakeTensor {
	return &fakeTensor{dev: d, dtype: t.dtype, n: t.n}
}

type retraction struct {
	dev     *fakeDevice
	op      string
	failure error
}

type fakeHost struct {
	cpu, gpu  *fakeDevice
	retracted []retraction
}

func (h *fakeHost) CPU() *fakeDevice                { return h.cpu }
func (h *fakeHost) DefaultAccelerator() *fakeDevice { return h.gpu }
func (h *fakeHost) Failure(t *fakeTensor) error     { return t.err }

func (h *fakeHost) Holds(d *fakeDevice, dtype hal.DType) bool {
	return d.holds == nil || d.holds[dtype]
}

func (h *fakeHost) CheckLive(op string, t *fakeTensor) {
	if t.released {
		panic(op + ": released")
	}
}

func (h *fakeHost) MixedDevices(op, why string, a, b *fakeTensor) {
	panic(fmt.Sprintf("%s: %s vs %s (%s)", op, a.dev.name, b.dev.name, why))
}

func (h *fakeHost) RetractOOM(d *fakeDevice, op string, failure error) {
	h.retracted = append(h.retracted, retraction{d, op, failure})
}

func newFakes() (*Router[*fakeDevice, *fakeTensor], *fakeHost) {
	h := &fakeHost{
		cpu: &fakeDevice{name: "cpu"},
		gpu: &fakeDevice{name: "gpu:0", info: hal.Info{Name: "fake", Type: hal.AdapterDiscrete},
			holds: map[hal.DType]bool{hal.Float32: true, hal.Int32: true}},
	}
	return NewRouter[*fakeDevice, *fakeTensor](h), h
}

// under runs the test with policy p and thresholds thr in force.
func under(t *testing.T, p Policy, thr Thresholds) {
	prev := Set(p)
	SetThresholds(thr)
	t.Cleanup(func() { Set(prev); ResetThresholds() })
}

var hundred = Thresholds{Elementwise: 100, Reduction: 100, MatMul: 100, Window: 100, Creation: 100}

func panicOf(f func()) (msg any) {
	defer func() { msg = recover() }()
	f()
	return nil
}

func TestExplicitMovesNothing(t *testing.T) {
	r, h := newFakes()
	under(t, Explicit, hundred)
	a := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 1000}
	b := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 1000}
	pa, pb := a, b
	if moved := r.Route("Add", Elementwise, 1000, &pa, &pb); moved != nil || pa != a || pb != b {
		t.Fatalf("Explicit moved %v", moved)
	}
	g := &fakeTensor{dev: h.gpu, dtype: hal.Float32, n: 4}
	pg := g
	got := panicOf(func() { r.Route("Add", Elementwise, 4, &pa, &pg) })
	want := "Add: cpu vs gpu:0 (the Explicit placement moves nothing: copy one with To)"
	if got != want {
		t.Fatalf("mixed devices under Explicit: panic %v, want %q", got, want)
	}
	if s := r.Stats(); len(s.Ops) != 0 || s.Moves != 0 {
		t.Fatalf("Explicit counted %+v", s)
	}
}

func TestAutoRoutesBySize(t *testing.T) {
	r, h := newFakes()
	under(t, Auto, hundred)
	small := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 99}
	p := small
	if moved := r.Route("Exp", Elementwise, 99, &p); moved != nil || p != small {
		t.Fatalf("below the threshold: moved %v", moved)
	}
	big := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 100}
	p = big
	moved := r.Route("Exp", Elementwise, 100, &p)
	if len(moved) != 1 || p != moved[0] || p.dev != h.gpu {
		t.Fatalf("at the threshold: operand on %v, moved %v; want it on the GPU", p.dev.name, moved)
	}
	// Mixed operands below the threshold meet where most bytes are.
	onGPU := &fakeTensor{dev: h.gpu, dtype: hal.Float32, n: 10}
	onCPU := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 20}
	pg, pc := onGPU, onCPU
	r.Route("Add", Elementwise, 20, &pg, &pc)
	if pg.dev != h.cpu || pc != onCPU {
		t.Fatalf("mixed below threshold: GPU operand now on %s, CPU operand moved %v", pg.dev.name, pc != onCPU)
	}
	s := r.Stats()
	want := map[string]int64{"cpu": 2, "gpu:0": 1}
	if fmt.Sprint(s.Ops) != fmt.Sprint(want) || s.Moves != 2 || s.BytesMoved != 100*4+10*4 {
		t.Fatalf("stats %+v, want ops %v, 2 moves of %d bytes", s, want, 110*4)
	}
	r.ResetStats()
	if s := r.Stats(); len(s.Ops) != 0 || s.Moves != 0 || s.BytesMoved != 0 {
		t.Fatalf("after ResetStats: %+v", s)
	}
}

func TestForceAndMinimize(t *testing.T) {
	r, h := newFakes()
	under(t, ForceGPU, NeverThresholds)
	f64 := &fakeTensor{dev: h.cpu, dtype: hal.Float64, n: 8}
	p := f64
	if moved := r.Route("Exp", Elementwise, 8, &p); moved != nil || p != f64 {
		t.Fatal("ForceGPU moved a dtype the GPU cannot hold")
	}
	f32 := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 8}
	p = f32
	if r.Route("Exp", Elementwise, 8, &p); p.dev != h.gpu {
		t.Fatal("ForceGPU left a float32 op on the CPU")
	}

	Set(MinimizeTransfers)
	a := &fakeTensor{dev: h.gpu, dtype: hal.Float32, n: 30}
	b := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 20}
	pa, pb := a, b
	if r.Route("Add", Elementwise, 30, &pa, &pb); pa != a || pb.dev != h.gpu {
		t.Fatal("MinimizeTransfers did not move the smaller side to the larger")
	}
	// The heavier device cannot hold a dtype: meet on the CPU.
	c := &fakeTensor{dev: h.gpu, dtype: hal.Float32, n: 30}
	d := &fakeTensor{dev: h.cpu, dtype: hal.Float64, n: 2}
	pc, pd := c, d
	if r.Route("Where", Elementwise, 30, &pc, &pd); pc.dev != h.cpu || pd != d {
		t.Fatal("operands the GPU cannot all hold did not meet on the CPU")
	}
}

func TestRouteInPlaceRunsWhereTheWrittenAre(t *testing.T) {
	r, h := newFakes()
	under(t, ForceCPU, hundred)
	param := &fakeTensor{dev: h.gpu, dtype: hal.Float32, n: 50}
	grad := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 50}
	pg := grad
	moved := r.RouteInPlace("Step", []*fakeTensor{param}, &pg)
	if len(moved) != 1 || pg.dev != h.gpu {
		t.Fatalf("the gradient stayed on %s; want it moved to the parameter's GPU", pg.dev.name)
	}
	other := &fakeTensor{dev: h.cpu, dtype: hal.Float32, n: 50}
	got := panicOf(func() { r.RouteInPlace("Step", []*fakeTensor{param, other}) })
	if got != "Step: gpu:0 vs cpu (they are written in place)" {
		t.Fatalf("written operands on two devices: panic %v", got)
	}
}

func TestPlaceNew(t *testing.T) {
	r, h := newFakes()
	under(t, Auto, hundred)
	if got := r.PlaceNew(h.gpu, hal.Float32, 99); got != h.cpu {
		t.Fatalf("Auto put small host data for the GPU on %s, want cpu", got.name)
	}
	if got := r.PlaceNew(h.gpu, hal.Float32, 100); got != h.gpu {
		t.Fatalf("Auto put host data at the creation threshold on %s, want the GPU", got.name)
	}
	if s := r.Stats(); s.KeptOnCPU != 1 {
		t.Fatalf("KeptOnCPU = %d, want 1", s.KeptOnCPU)
	}
	Set(ForceGPU)
	if got := r.PlaceNew(h.cpu, hal.Float64, 5); got != h.cpu {
		t.Fatal("ForceGPU sent float64 host data to a GPU that cannot hold it")
	}
	r.SetAccelerator(nil)
	if got := r.PlaceNew(h.cpu, hal.Float32, 5); got != h.cpu {
		t.Fatal("ForceGPU without an accelerator moved host data")
	}
}

func TestOutOfMemoryReruns(t *testing.T) {
	oom := fmt.Errorf("Add: %w", hal.ErrOutOfMemory)
	for _, tc := range []struct {
		policy Policy
		rerun  bool
	}{{Auto, true}, {MinimizeTransfers, true}, {Explicit, false}, {ForceGPU, false}} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			r, h := newFakes()
			under(t, tc.policy, hundred)
			a := &fakeTensor{dev: h.gpu, dtype: hal.Float32, n: 1000}
			p := a
			var ranOn []string
			out := r.Routed("Add", Elementwise, 1000, func() *fakeTensor {
				ranOn = append(ranOn, p.dev.name)
				res := &fakeTensor{dev: p.dev, dtype: hal.Float32, n: p.n}
				if p.dev == h.gpu {
					res.err = oom
				}
				return res
			}, &p)
			want := []string{"gpu:0"}
			if tc.rerun {
				want = append(want, "cpu")
			}
			if fmt.Sprint(ranOn) != fmt.Sprint(want) {
				t.Fatalf("ran on %v, want %v", ranOn, want)
			}
			s := r.Stats()
			if !tc.rerun {
				if out.err != oom || len(h.retracted) != 0 || s.OOMFallbacks != 0 {
					t.Fatalf("kept failure %v, retracted %v, fallbacks %d", out.err, h.retracted, s.OOMFallbacks)
				}
				return
			}
			if out.err != nil || out.dev != h.cpu {
				t.Fatalf("rerun result on %s with %v, want on cpu without error", out.dev.name, out.err)
			}
			if len(h.retracted) != 1 || h.retracted[0] != (retraction{h.gpu, "Add", oom}) {
				t.Fatalf("retracted %v, want the GPU's failure of Add", h.retracted)
			}
			if s.OOMFallbacks != 1 || s.Moves != 1 || s.BytesMoved != 4000 || !p.released {
				t.Fatalf("stats %+v, copy released %v; want one fallback moving 4000 bytes, the copy released", s, p.released)
			}
		})
	}
}

// TestRoutedWhereRuns: an op only the CPU runs (linalg) goes to the CPU
// from a GPU under every moving policy, runs where its operands are under
// Explicit, and stays on the GPU where the GPU runs it.
func TestRoutedWhereRuns(t *testing.T) {
	r, h := newFakes()
	cpuOnly := func(d *fakeDevice) bool { return d == h.cpu }
	everywhere := func(*fakeDevice) bool { return true }
	for _, tc := range []struct {
		policy Policy
		runs   func(*fakeDevice) bool
		home   *fakeDevice
		n      int
		want   *fakeDevice
	}{
		{Auto, cpuOnly, h.gpu, 1000, h.cpu},
		{Auto, cpuOnly, h.cpu, 1000, h.cpu}, // above the threshold, yet the GPU cannot run it
		{ForceGPU, cpuOnly, h.cpu, 4, h.cpu},
		{MinimizeTransfers, cpuOnly, h.gpu, 4, h.cpu},
		{Explicit, cpuOnly, h.gpu, 4, h.gpu}, // the op's own check refuses it there
		{Auto, everywhere, h.gpu, 4, h.gpu},
		{Auto, everywhere, h.cpu, 1000, h.gpu},
	} {
		t.Run(fmt.Sprintf("%v/%s/%d", tc.policy, tc.home.name, tc.n), func(t *testing.T) {
			under(t, tc.policy, hundred)
			a := &fakeTensor{dev: tc.home, dtype: hal.Float32, n: tc.n}
			var ran *fakeDevice
			out := r.RoutedWhereRuns("Inv", MatMul, int64(tc.n), tc.runs, func() *fakeTensor {
				ran = a.dev
				return &fakeTensor{dev: a.dev, dtype: hal.Float32, n: a.n}
			}, &a)
			if ran != tc.want || out.dev != tc.want {
				t.Fatalf("ran on %s, result on %s; want %s", ran.name, out.dev.name, tc.want.name)
			}
		})
	}
}
