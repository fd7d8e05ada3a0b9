//go:build cgo

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/cpu"
	"github.com/webtensor/webtensor/hal"
)

// unfused turns fusion off on d until the returned function runs, for
// tests of the kernels one op records on its own.
func unfused(d *Device) func() {
	d.fuse.setEnabled(false)
	return func() { d.fuse.setEnabled(true) }
}

// twin runs every hal call on the WebGPU test device and on the CPU
// backend, whose results are the reference.
type twin struct {
	t    *testing.T
	devs [2]hal.Device
	rng  *rand.Rand
}

// tval is a tensor on both devices: a view per device.
type tval struct {
	v     [2]hal.View
	exact bool // derived only through ops both backends compute exactly
	owned bool // a chain intermediate the test may free
}

func (w *twin) alloc(dt hal.DType, elems int) [2]hal.Buffer {
	var b [2]hal.Buffer
	for k, d := range w.devs {
		var err error
		b[k], err = d.Alloc(int64(elems * dt.Size()))
		require.NoError(w.t, err)
	}
	return b
}

// input writes random float32 values in [-2, 2) to a buffer of elems
// elements and views it as shape/strides/offset.
func (w *twin) input(elems, offset int, shape, strides []int) *tval {
	b := w.alloc(hal.Float32, elems)
	raw := make([]byte, 4*elems)
	for i := range elems {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(w.rng.Float64()*4-2)))
	}
	x := &tval{exact: true}
	for k, d := range w.devs {
		require.NoError(w.t, d.Write(b[k], raw))
		x.v[k] = hal.View{Buf: b[k], DType: hal.Float32, Offset: offset, Shape: shape, Strides: strides}
	}
	return x
}

func (w *twin) output(dt hal.DType, shape []int) *tval {
	b := w.alloc(dt, hal.View{Shape: shape}.Elements())
	x := &tval{owned: true}
	for k := range w.devs {
		x.v[k] = hal.Contiguous(b[k], dt, shape...)
	}
	return x
}

func (w *twin) read(x *tval) [2][]float64 {
	var out [2][]float64
	for k, d := range w.devs {
		n := x.v[k].Offset + x.v[k].Span()
		raw := make([]byte, 4*n)
		require.NoError(w.t, d.Read(x.v[k].Buf, raw))
		vals := make([]float64, 0, x.v[k].Elements())
		for i := range x.v[k].Elements() {
			at := x.v[k].Offset
			rem := i
			for a := len(x.v[k].Shape) - 1; a >= 0; a-- {
				at += rem % x.v[k].Shape[a] * x.v[k].Strides[a]
				rem /= x.v[k].Shape[a]
			}
			bits := binary.LittleEndian.Uint32(raw[4*at:])
			if x.v[k].DType == hal.Int32 {
				vals = append(vals, float64(int32(bits)))
			} else {
				vals = append(vals, float64(math.Float32frombits(bits)))
			}
		}
		out[k] = vals
	}
	return out
}

// check compares a tensor's WebGPU values with the CPU's.
func (w *twin) check(x *tval, what string) {
	got := w.read(x)
	tol := 1e-4
	if x.exact {
		tol = 0
	}
	for i := range got[1] {
		g, want := got[0][i], got[1][i]
		if math.IsNaN(g) && math.IsNaN(want) || g == want {
			continue
		}
		if math.Abs(g-want) > tol*(1e-3+math.Abs(want)) {
			w.t.Fatalf("%s: element %d is %v, the CPU backend says %v", what, i, g, want)
		}
	}
}

// TestFusionRandomChains runs random chains of elementwise ops through the
// fusion engine: unary, binary, comparisons, where and casts, over
// broadcast, transposed and offset external inputs, in place or not, with
// intermediates freed, kept or read midway, and compares every tensor with
// the CPU backend.
func TestFusionRandomChains(t *testing.T) { forEachTestDevice(t, testFusionRandomChains) }

func testFusionRandomChains(t *testing.T, d *Device) {
	if !fusionEnabled() {
		t.Skip("WEBTENSOR_FUSION=0")
	}
	w := &twin{t: t, devs: [2]hal.Device{d, cpu.New()}, rng: rand.New(rand.NewPCG(6, 6))}
	shapes := [][]int{{1}, {7}, {1000}, {1025}, {5, 7}, {33, 31}}
	unary := []hal.UnaryOp{hal.Neg, hal.Abs, hal.ReLU, hal.Sigmoid, hal.Tanh, hal.Square, hal.Sin, hal.LeakyReLU, hal.Clamp}
	exactUnary := map[hal.UnaryOp]bool{hal.Neg: true, hal.Abs: true, hal.ReLU: true, hal.Clamp: true}
	binary := []hal.BinaryOp{hal.Add, hal.Sub, hal.Mul, hal.Maximum, hal.Minimum}
	before := d.Stats().Dispatches
	ops := 0
	for iter := range 60 {
		shape := shapes[iter%len(shapes)]
		n := hal.View{Shape: shape}.Elements()
		rows, cols := 1, shape[len(shape)-1]
		if len(shape) == 2 {
			rows = shape[0]
		}
		var floats, ints []*tval
		floats = append(floats, w.input(n, 0, shape, hal.RowMajorStrides(shape)), w.input(n, 0, shape, hal.RowMajorStrides(shape)))
		if len(shape) == 2 {
			floats = append(floats,
				w.input(cols, 0, shape, []int{0, 1}),   // a broadcast bias
				w.input(n, 0, shape, []int{1, rows}),   // a transpose
				w.input(n+3, 3, shape, []int{cols, 1}), // an offset view
				w.input(1, 0, shape, []int{0, 0}))      // a scalar
		} else {
			floats = append(floats, w.input(n+3, 3, shape, []int{1}), w.input(1, 0, shape, []int{0}))
		}
		pick := func(s []*tval) *tval { return s[w.rng.IntN(len(s))] }
		steps := 1 + w.rng.IntN(12)
		for step := range steps {
			what := fmt.Sprintf("chain %d (shape %v) step %d", iter, shape, step)
			a := pick(floats)
			inPlace := a.owned && w.rng.IntN(3) == 0
			var dst *tval
			switch k := w.rng.IntN(10); {
			case k < 4:
				op := unary[w.rng.IntN(len(unary))]
				args := hal.Args{Alpha: 0.1}
				if op == hal.Clamp {
					args = hal.Args{Alpha: -0.5, Beta: 0.7}
				}
				dst = a
				if !inPlace {
					dst = w.output(hal.Float32, shape)
				}
				for j, dv := range w.devs {
					require.NoError(t, dv.Unary(op, dst.v[j], a.v[j], args), what)
				}
				dst.exact = a.exact && exactUnary[op]
				what += " " + op.String()
			case k < 7:
				op := binary[w.rng.IntN(len(binary))]
				b := pick(floats)
				dst = a
				if !inPlace || b.v[0].Buf == a.v[0].Buf && !b.v[0].Same(a.v[0]) {
					dst = w.output(hal.Float32, shape)
				}
				for j, dv := range w.devs {
					require.NoError(t, dv.Binary(op, dst.v[j], a.v[j], b.v[j]), what)
				}
				dst.exact = a.exact && b.exact && (op == hal.Maximum || op == hal.Minimum)
				what += " " + op.String()
			case k < 8:
				// A mask from exact values only: a float difference of an
				// ulp must not flip it.
				var exact []*tval
				for _, f := range floats {
					if f.exact {
						exact = append(exact, f)
					}
				}
				a, b := pick(exact), pick(exact)
				dst = w.output(hal.Int32, shape)
				for j, dv := range w.devs {
					require.NoError(t, dv.Binary(hal.Lt, dst.v[j], a.v[j], b.v[j]), what)
				}
				dst.exact = true
				ints = append(ints, dst)
				what += " Lt"
			case k < 9 && len(ints) > 0:
				c, b := pick(ints), pick(floats)
				dst = w.output(hal.Float32, shape)
				for j, dv := range w.devs {
					require.NoError(t, dv.Where(dst.v[j], c.v[j], a.v[j], b.v[j]), what)
				}
				dst.exact = a.exact && b.exact
				what += " Where"
			default:
				// A cast to Int32 and back: truncation of exact values.
				if !a.exact {
					continue
				}
				m := w.output(hal.Int32, shape)
				dst = w.output(hal.Float32, shape)
				for j, dv := range w.devs {
					require.NoError(t, dv.Copy(m.v[j], a.v[j]), what)
					require.NoError(t, dv.Copy(dst.v[j], m.v[j]), what)
				}
				m.exact, dst.exact = true, true
				ints = append(ints, m)
				ops++
				what += " casts"
			}
			ops++
			if dst != a && dst.v[0].DType == hal.Float32 {
				floats = append(floats, dst)
			}
			switch r := w.rng.IntN(10); {
			case r == 0:
				w.check(dst, what+" (read midway)")
			case r <= 2:
				// Free an intermediate: its store is dropped, and its
				// buffer may come back from the pool.
				k := w.rng.IntN(len(floats))
				if floats[k].owned && floats[k] != dst {
					for j, dv := range w.devs {
						dv.Free(floats[k].v[j].Buf)
					}
					floats = append(floats[:k], floats[k+1:]...)
				}
			}
		}
		for k, f := range floats {
			w.check(f, fmt.Sprintf("chain %d (shape %v) float %d", iter, shape, k))
		}
		for k, m := range ints {
			w.check(m, fmt.Sprintf("chain %d (shape %v) mask %d", iter, shape, k))
		}
	}
	t.Logf("%d ops in %d dispatches", ops, d.Stats().Dispatches-before)
}
