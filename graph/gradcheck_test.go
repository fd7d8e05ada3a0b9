package graph

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// The gradient checks. Every rule in the table is checked by at least one
// case (TestEveryRuleIsChecked): the analytic vector-Jacobian product
// against central finite differences, in float64 on the CPU
// (TestGradCheck), then the same for the gradient of the gradient
// (CreateGraph), and the float32 gradients on WebGPU against the CPU's
// (TestGradsAgreeAcrossDevices).
//
// Tolerances, stated once:
//   - finite differences: GradCheck's defaults (float64, h = 1e-6,
//     central): |analytic − numeric| ≤ 1e-6 + 1e-5·|numeric|. The
//     truncation error is O(h²) and the rounding error about
//     1e-16·|L|/h ≈ 1e-10·|L|.
//   - devices (float32): |webgpu − cpu| ≤ rtol·|cpu| + atol·max(1, max|cpu|)
//     with rtol = atol = 2e-4 unless a case states its own, for gradients
//     that go through a few float32 kernels and sums: each kernel within
//     WGSL's accuracy (≤ 4.5 ulp, for √; haltest.WGSLAccuracy), and the
//     CPU's within an ulp or two.
//   - float16 (f16_grad_test.go): f16GradTol.

// gradCase is one gradient check: inputs drawn at random, and f, which
// computes the value to differentiate from them.
type gradCase struct {
	name   string
	inputs []input
	f      func(in []*Value) *Value
	// firstOrder skips the second-order check, for rules whose gradient
	// is piecewise constant in an input that FD cannot see through
	// (indices), or too costly to check twice.
	firstOrder bool
	// tol overrides the cross-device tolerance (rtol = atol = tol).
	tol float64
	// cpuOnly: the case's op runs on the CPU backend only (linalg): on a
	// WebGPU device it runs under the Auto placement, which moves that op
	// to the CPU, and a device without its kernels has no composition.
	cpuOnly bool
}

// input describes one operand of a case.
type input struct {
	shape []int
	// lo, hi bound uniform random values (default [-2, 2)).
	lo, hi float64
	// away keeps |x| ≥ away, off kinks at 0 (ReLU, Abs).
	away float64
	// index > 0 makes an Int32 tensor of values in [0, index): a constant.
	index int
	// values fixes the values (e.g. distinct ones, to avoid ties).
	values []float64
	// constant: a float operand that needs no gradient.
	constant bool
}

// gradCases collects every family's cases (added from init functions).
var gradCases []gradCase

func caseRNG(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(h.Sum64(), 7))
}

// draw returns each input's host data: float64s, or int32s for indices.
func (c gradCase) draw() (floats [][]float64, ints [][]int32) {
	rng := caseRNG(c.name)
	floats = make([][]float64, len(c.inputs))
	ints = make([][]int32, len(c.inputs))
	for i, in := range c.inputs {
		n := 1
		for _, d := range in.shape {
			n *= d
		}
		switch {
		case in.index > 0:
			ints[i] = make([]int32, n)
			for j := range ints[i] {
				ints[i][j] = int32(rng.IntN(in.index))
			}
		case in.values != nil:
			floats[i] = slices.Clone(in.values)
		default:
			lo, hi := in.lo, in.hi
			if lo == 0 && hi == 0 {
				lo, hi = -2, 2
			}
			floats[i] = make([]float64, n)
			for j := range floats[i] {
				x := lo + (hi-lo)*rng.Float64()
				for in.away > 0 && math.Abs(x) < in.away {
					x = lo + (hi-lo)*rng.Float64()
				}
				floats[i][j] = x
			}
		}
	}
	return floats, ints
}

// build makes the case's input values on dev in dtype.
func (c gradCase) build(dev *tensor.Device, dtype tensor.DType, floats [][]float64, ints [][]int32) []*Value {
	vals := make([]*Value, len(c.inputs))
	for i, in := range c.inputs {
		if in.index > 0 {
			vals[i] = Constant(tensor.FromInt32(dev, ints[i], in.shape...))
			continue
		}
		t := fromFloat64s(dev, dtype, floats[i], in.shape...)
		if in.constant {
			vals[i] = Constant(t)
		} else {
			vals[i] = Param(t)
		}
	}
	return vals
}

// fromFloat64s makes a tensor of dtype from host float64s, rounding on the
// host (WebGPU has no float64 to cast from).
func fromFloat64s(dev *tensor.Device, dtype tensor.DType, data []float64, shape ...int) *tensor.Tensor {
	if dtype == tensor.Float64 {
		return tensor.FromFloat64(dev, data, shape...)
	}
	f32 := make([]float32, len(data))
	for i, v := range data {
		f32[i] = float32(v)
	}
	t := tensor.FromFloat32(dev, f32, shape...)
	if dtype == tensor.Float32 {
		return t
	}
	defer t.Release()
	return t.Cast(dtype)
}

func (c gradCase) differentiable() []int {
	var idx []int
	for i, in := range c.inputs {
		if in.index == 0 && !in.constant {
			idx = append(idx, i)
		}
	}
	return idx
}

// inScope returns members of s that share the memory of vs, which stay the
// caller's.
func inScope(s *Scope, vs []*Value) []*Value {
	out := make([]*Value, len(vs))
	for i, v := range vs {
		out[i] = s.Use(v.Detach())
	}
	return out
}

func releaseValues(vs []*Value) {
	for _, v := range vs {
		v.Release()
	}
}

func randomLike(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.Float64()*2 - 1
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// vjp runs f on fresh inputs and returns Σ seed·f and the gradient of
// that with respect to each differentiable input (host float64), and
// the output's size.
func (c gradCase) vjp(t *testing.T, dev *tensor.Device, dtype tensor.DType, floats [][]float64, ints [][]int32, seed []float64) (float64, [][]float64) {
	t.Helper()
	in := c.build(dev, dtype, floats, ints)
	defer releaseValues(in)
	y := c.f(in)
	defer y.Release()
	out := read(t, y)
	require.Len(t, seed, len(out), "seed size")
	s := Constant(fromFloat64s(dev, dtype, seed, y.Shape()...))
	defer s.Release()
	var targets []*Value
	for _, i := range c.differentiable() {
		targets = append(targets, in[i])
	}
	gs, err := Grad([]*Value{y}, targets, []*Value{s}, AllowUnused)
	require.NoError(t, err)
	defer releaseValues(gs)
	res := make([][]float64, len(gs))
	for k, g := range gs {
		if g == nil {
			res[k] = make([]float64, len(floats[c.differentiable()[k]]))
			continue
		}
		res[k] = read(t, g)
	}
	return dot(seed, out), res
}

func outputSize(t *testing.T, c gradCase, dev *tensor.Device, floats [][]float64, ints [][]int32) (int, []int) {
	s := NewScope(NoGrad)
	defer s.Close()
	in := c.build(dev, tensor.Float64, floats, ints)
	defer releaseValues(in)
	y := c.f(inScope(s, in))
	defer y.Release()
	return y.Len(), y.Shape()
}

// TestGradCheck runs the public GradCheck on every case, first order and,
// unless the case says otherwise, second order.
func TestGradCheck(t *testing.T) {
	dev := cpuDevice(t)
	for _, c := range gradCases {
		t.Run(c.name, func(t *testing.T) {
			floats, ints := c.draw()
			in := c.build(dev, tensor.Float64, floats, ints)
			defer releaseValues(in)
			h := fnv.New64a()
			h.Write([]byte(c.name))
			err := GradCheck(c.f, in, GradCheckOptions{SecondOrder: !c.firstOrder, Seed: h.Sum64()})
			require.NoError(t, err)
		})
	}
}

func TestGradsAgreeAcrossDevices(t *testing.T) { forEachWebGPU(t, testGradsAgreeAcrossDevices) }

func testGradsAgreeAcrossDevices(t *testing.T, gpu *tensor.Device) {
	cpu := cpuDevice(t)
	for _, c := range gradCases {
		t.Run(c.name, func(t *testing.T) {
			floats, ints := c.draw()
			n, _ := outputSize(t, c, cpu, floats, ints)
			seed := randomLike(caseRNG(c.name+"/seed"), n)
			_, want := c.vjp(t, cpu, tensor.Float32, floats, ints, seed)
			if c.cpuOnly {
				prev, prevGPU := tensor.SetPlacement(tensor.Auto), tensor.SetPlacementGPU(gpu)
				defer func() { tensor.SetPlacement(prev); tensor.SetPlacementGPU(prevGPU) }()
			}
			_, got := c.vjp(t, gpu, tensor.Float32, floats, ints, seed)
			tol := c.tol
			if tol == 0 {
				tol = 2e-4
			}
			requireGradsClose(t, "webgpu", "cpu", got, want, tol)
		})
	}
}

// requireGradsClose fails t unless each gradient of got is within
// tol·|want| + tol·max(1, max|want|) of want's, element by element; gotName
// and wantName name the two sides in the message.
func requireGradsClose(t *testing.T, gotName, wantName string, got, want [][]float64, tol float64) {
	t.Helper()
	for k := range want {
		scale := 1.0
		for _, v := range want[k] {
			scale = math.Max(scale, math.Abs(v))
		}
		for j := range want[k] {
			d := math.Abs(got[k][j] - want[k][j])
			if !(d <= tol*math.Abs(want[k][j])+tol*scale) {
				t.Fatalf("gradient %d [%d]: %s %.17g, %s %.17g (|Δ| = %.3g, tolerance %.3g)",
					k, j, gotName, got[k][j], wantName, want[k][j], d, tol*math.Abs(want[k][j])+tol*scale)
			}
		}
	}
}

// TestEveryRuleIsChecked builds every case's graph and requires that the
// cases together go through every rule in the table.
func TestEveryRuleIsChecked(t *testing.T) {
	dev := cpuDevice(t)
	seen := map[string]bool{}
	for _, c := range gradCases {
		floats, ints := c.draw()
		in := c.build(dev, tensor.Float64, floats, ints)
		y := c.f(in)
		if y.RequiresGrad() && y.v.node != nil {
			order, err := topoOrder("test", []*Value{y})
			require.NoError(t, err)
			for _, n := range order {
				seen[n.op] = true
			}
		}
		y.Release()
		releaseValues(in)
	}
	var missing []string
	for op := range rules {
		if !seen[op] {
			missing = append(missing, op)
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "rules no gradient check goes through")
}
