package tensor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refConcat joins row-major arrays along axis a on the host.
func refConcat(a int, parts [][]float64, shapes [][]int) []float64 {
	outer := product(shapes[0][:a])
	var out []float64
	for o := range outer {
		for i, p := range parts {
			inner := product(shapes[i][a:])
			out = append(out, p[o*inner:(o+1)*inner]...)
		}
	}
	return out
}

func TestConcatStack(t *testing.T) { forEachDevice(t, testConcatStack) }

func testConcatStack(t *testing.T, dev *Device) {
	forEachDType(t, dev, "Concat", probeUnary(dev, func(x *Tensor) *Tensor { return Concat(0, x, x) }), func(t *testing.T, dtype DType) {
		for _, tc := range []struct {
			dim    int
			shapes [][]int
		}{
			{0, [][]int{{7}, {1000}, {1}}},
			{1, [][]int{{2, 3, 4}, {2, 1, 4}, {2, 0, 4}, {2, 5, 4}}},
			{-1, [][]int{{3, 2}, {3, 5}}},
			{0, [][]int{{1025}}},
		} {
			t.Run(fmt.Sprint(tc.shapes), func(t *testing.T) {
				rng := newRand(t)
				var parts []*Tensor
				var values [][]float64
				for i, s := range tc.shapes {
					v := randomValues(rng, dtype, product(s), -8, 8)
					values = append(values, v)
					parts = append(parts, uploadAs(dev, dtype, v, s, layouts[i%len(layouts)]))
				}
				got := Concat(tc.dim, parts...)
				defer releaseAll(append(parts, got)...)
				a := (tc.dim + len(tc.shapes[0])) % len(tc.shapes[0])
				shape := slices.Clone(tc.shapes[0])
				shape[a] = 0
				for _, s := range tc.shapes {
					shape[a] += s[a]
				}
				assert.Equal(t, shape, got.Shape())
				assert.Equal(t, refConcat(a, values, tc.shapes), read64(t, got))
			})
		}
		t.Run("Stack", func(t *testing.T) {
			rng := newRand(t)
			av, bv := randomValues(rng, dtype, 6, -8, 8), randomValues(rng, dtype, 6, -8, 8)
			a, b := upload(dev, dtype, av, 2, 3), uploadAs(dev, dtype, bv, []int{2, 3}, transposed)
			s0, s2, sm := Stack(0, a, b), Stack(2, a, b), Stack(-2, a, b)
			defer releaseAll(a, b, s0, s2, sm)
			assert.Equal(t, []int{2, 2, 3}, s0.Shape())
			assert.Equal(t, append(slices.Clone(av), bv...), read64(t, s0))
			assert.Equal(t, []int{2, 3, 2}, s2.Shape())
			var want []float64
			for i := range av {
				want = append(want, av[i], bv[i])
			}
			assert.Equal(t, want, read64(t, s2))
			assert.Equal(t, []int{2, 2, 3}, sm.Shape())
			assert.Equal(t, refConcat(1, [][]float64{av, bv}, [][]int{{2, 1, 3}, {2, 1, 3}}), read64(t, sm))
		})
	})
}

// refPad pads a row-major host array as torch.nn.functional.pad.
func refPad(values []float64, shape, pads []int, mode PadMode, value float64) ([]float64, []int) {
	out := slices.Clone(shape)
	for i := range len(pads) / 2 {
		a := len(shape) - 1 - i
		out[a] += pads[2*i] + pads[2*i+1]
	}
	result := make([]float64, product(out))
	for j := range result {
		src, stride, rest, inside := 0, 1, j, true
		for a := len(out) - 1; a >= 0; a-- {
			c := rest % out[a]
			rest /= out[a]
			before := 0
			if i := len(shape) - 1 - a; i < len(pads)/2 {
				before = pads[2*i]
			}
			k := c - before
			n := shape[a]
			if mode == PadReflect {
				if k < 0 {
					k = -k
				} else if k >= n {
					k = 2*(n-1) - k
				}
			}
			if k < 0 || k >= n {
				inside = false
			}
			src += k * stride
			stride *= n
		}
		if inside {
			result[j] = values[src]
		} else {
			result[j] = value
		}
	}
	return result, out
}

func TestPad(t *testing.T) { forEachDevice(t, testPad) }

func testPad(t *testing.T, dev *Device) {
	for _, tc := range []struct {
		shape []int
		pads  []int
		mode  PadMode
	}{
		{[]int{7}, []int{2, 3}, PadConstant},
		{[]int{2, 3, 4}, []int{1, 0, 2, 1}, PadConstant},
		{[]int{2, 3, 4}, []int{-1, 2, 0, -2}, PadConstant},
		{[]int{2, 3}, []int{0, 0, 0, 0}, PadConstant},
		{[]int{2, 3, 4}, []int{1, 1, 1, 1, 1, 1}, PadConstant},
		{[]int{7}, []int{3, 2}, PadReflect},
		{[]int{2, 3, 5}, []int{4, 1, 2, 1}, PadReflect},
		{[]int{1, 2, 4, 4}, []int{1, 1, 3, 0}, PadReflect},
	} {
		op := "Pad"
		if tc.mode == PadReflect {
			op = "Pad(reflect)"
		}
		t.Run(fmt.Sprintf("%v/%v/%v", tc.shape, tc.pads, tc.mode), func(t *testing.T) {
			forEachDType(t, dev, op, probeUnary(dev, func(x *Tensor) *Tensor { return x.Pad([]int{0, 0}, tc.mode, 0) }), func(t *testing.T, dtype DType) {
				values := randomValues(newRand(t), dtype, product(tc.shape), -8, 8)
				x := uploadAs(dev, dtype, values, tc.shape, transposed)
				got := x.Pad(tc.pads, tc.mode, -1.5)
				defer releaseAll(x, got)
				fill := roundTo(dtype, -1.5)
				if dtype.IsInteger() {
					fill = -1
				}
				want, shape := refPad(values, tc.shape, tc.pads, tc.mode, fill)
				require.Equal(t, shape, got.Shape())
				assert.Equal(t, want, read64(t, got))
			})
		})
	}
}

func TestJoinErrors(t *testing.T) {
	dev := openCPU(t)
	a, b, c := Zeros(dev, 2, 3), Zeros(dev, 2, 4), Zeros(dev, 2)
	i := Full(dev, Int32, 0, 2, 3)
	defer releaseAll(a, b, c, i)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { Concat(0) }, "tensor: Concat: no tensors to join"},
		{func() { Concat(0, a, b) }, "tensor: Concat: shape mismatch: [2 3] vs [2 4] (axis 1 differs and is not the joined axis 0)"},
		{func() { Concat(0, a, c) }, "tensor: Concat: shape mismatch: [2 3] vs [2] (ranks differ)"},
		{func() { Concat(0, a, i) }, "tensor: Concat: dtype mismatch: float32 vs int32"},
		{func() { Concat(2, a, a) }, "tensor: Concat: dim 2 is out of range for rank 2 (want -2 … 1)"},
		{func() { Stack(0, a, b) }, "tensor: Stack: shape mismatch: [2 3] vs [2 4]"},
		{func() { Stack(3, a, a) }, "tensor: Stack: dim 3 is out of range for rank 2 (want -3 … 2)"},
		{func() { a.Pad([]int{1}, PadConstant, 0) }, "tensor: Pad: pads [1] must be (before, after) pairs for at most 2 axes of [2 3]"},
		{func() { a.Pad([]int{3, 0}, PadReflect, 0) }, "tensor: Pad: reflect pads (3, 0) must lie in [0, 3) for axis 1 of [2 3]"},
		{func() { a.Pad([]int{-2, -2}, PadConstant, 0) }, "tensor: Pad: pads [-2 -2] leave axis 1 of [2 3] with a negative size"},
	} {
		assert.Equal(t, tc.want, panicMessage(t, tc.f))
	}
}
