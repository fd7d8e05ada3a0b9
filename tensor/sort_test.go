package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

func init() {
	for name, f := range map[string]func(in *opInputs) *Tensor{
		"Sort": func(in *opInputs) *Tensor {
			v, i := in.x(5, 7).Sort(1, false, true)
			i.Release()
			return v
		},
		"Argsort": func(in *opInputs) *Tensor { return in.x(5, 7).Argsort(0, true, true) },
		"TopK": func(in *opInputs) *Tensor {
			v, i := in.x(6, 5).TopK(3, -1, true, true)
			i.Release()
			return v
		},
		"KthValue": func(in *opInputs) *Tensor {
			v, i := in.x(6, 5).KthValue(2, 0, false)
			v.Release()
			return i
		},
		"Cumsum":       func(in *opInputs) *Tensor { return in.x(4, 9).Cumsum(1) },
		"Cumprod":      func(in *opInputs) *Tensor { return in.x(4, 9).Cumprod(0) },
		"LogCumSumExp": func(in *opInputs) *Tensor { return in.x(4, 9).LogCumSumExp(-1) },
	} {
		opRunners[name] = f
	}
}

// sortZeroCases are the zero-size cases of this file's ops: an empty
// tensor sorts and scans to an empty one; TopK of k = 0 is empty.
func sortZeroCases() map[string][]zcase {
	one := func(f func(dev *Device) *Tensor) func(dev *Device) []*Tensor {
		return func(dev *Device) []*Tensor { return []*Tensor{f(dev)} }
	}
	both := func(f func(dev *Device) (*Tensor, *Tensor)) func(dev *Device) []*Tensor {
		return func(dev *Device) []*Tensor { v, i := f(dev); return []*Tensor{v, i} }
	}
	x0 := func(dev *Device) *Tensor { return Zeros(dev, 0, 3) }
	return map[string][]zcase{
		"Sort":    {{run: both(func(d *Device) (*Tensor, *Tensor) { return x0(d).Sort(1, false, true) }), shapes: zsh([]int{0, 3}, []int{0, 3})}},
		"Argsort": {{run: one(func(d *Device) *Tensor { return x0(d).Argsort(0, true, false) }), shapes: zsh([]int{0, 3})}},
		"TopK": {
			{run: both(func(d *Device) (*Tensor, *Tensor) { return x0(d).TopK(2, 1, true, true) }), shapes: zsh([]int{0, 2}, []int{0, 2})},
			{run: both(func(d *Device) (*Tensor, *Tensor) { return Ones(d, 2, 3).TopK(0, 1, true, true) }), shapes: zsh([]int{2, 0}, []int{2, 0})},
		},
		"KthValue": {
			{run: both(func(d *Device) (*Tensor, *Tensor) { return x0(d).KthValue(1, 1, false) }), shapes: zsh([]int{0}, []int{0})},
			{run: both(func(d *Device) (*Tensor, *Tensor) { return x0(d).KthValue(1, 0, false) }), misuse: "out of range"},
		},
		"Cumsum":       {{run: one(func(d *Device) *Tensor { return x0(d).Cumsum(0) }), shapes: zsh([]int{0, 3})}},
		"Cumprod":      {{run: one(func(d *Device) *Tensor { return Zeros(d, 2, 0).Cumprod(1) }), shapes: zsh([]int{2, 0})}},
		"LogCumSumExp": {{run: one(func(d *Device) *Tensor { return x0(d).LogCumSumExp(-1) }), shapes: zsh([]int{0, 3})}},
	}
}

// lines calls f with the flat positions of each line of shape along axis
// a, in order.
func lines(shape []int, a int, f func(pos []int)) {
	n := product(shape)
	if n == 0 {
		return
	}
	size := shape[a]
	inner := product(shape[a+1:])
	for o := 0; o < n/(size*inner); o++ {
		for in := range inner {
			pos := make([]int, size)
			for j := range pos {
				pos[j] = o*size*inner + j*inner + in
			}
			f(pos)
		}
	}
}

// refSortAlong is torch.sort(stable=True) along axis a in float64: NaN
// above +Inf, −0 equal to +0, ties in input order.
func refSortAlong(x []float64, shape []int, a int, descending bool) (vals, idx []float64) {
	vals, idx = make([]float64, len(x)), make([]float64, len(x))
	lines(shape, a, func(pos []int) {
		perm := make([]int, len(pos))
		for j := range perm {
			perm[j] = j
		}
		slices.SortStableFunc(perm, func(p, q int) int {
			c := cmpNaNLast(x[pos[p]], x[pos[q]])
			if descending {
				c = -c
			}
			return c
		})
		for j, p := range perm {
			vals[pos[j]], idx[pos[j]] = x[pos[p]], float64(p)
		}
	})
	return vals, idx
}

func cmpNaNLast(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// tieValues draws values for dtype with many ties and, for floats, NaN,
// ±Inf and ±0.
func tieValues(rng *rand.Rand, dtype DType, n int) []float64 {
	pool := []float64{-2, 0, 1, 3}
	if dtype.IsFloat() {
		pool = append(pool, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.NaN())
	}
	v := randomValues(rng, dtype, n, -50, 50)
	for i := range v {
		if rng.IntN(3) == 0 {
			v[i] = pool[rng.IntN(len(pool))]
		}
	}
	return v
}

// sortCase is a shape, a dim (possibly negative) and a layout.
type sortCase struct {
	shape []int
	dim   int
	l     layout
}

func sortCases() []sortCase {
	return []sortCase{
		{[]int{1}, 0, packed}, {[]int{7}, -1, offset}, {[]int{1000}, 0, strided}, {[]int{70001}, 0, packed},
		{[]int{5, 7}, 0, transposed}, {[]int{5, 7}, -1, transposed}, {[]int{3, 1, 9}, 1, packed},
		{[]int{3, 4, 9}, -3, strided}, {[]int{4, 6, 5}, 1, transposed},
	}
}

func TestSortOps(t *testing.T) { forEachDevice(t, testSortOps) }

func testSortOps(t *testing.T, dev *Device) {
	probe := func(dt DType) { v, i := Zeros(dev, 2).Cast(dt).Sort(0, false, true); releaseAll(v, i) }
	forEachDType(t, dev, "Sort", probe, func(t *testing.T, dtype DType) {
		for _, c := range sortCases() {
			t.Run(fmt.Sprintf("%v/dim%d/%v", c.shape, c.dim, c.l), func(t *testing.T) {
				rng := newRand(t)
				x := tieValues(rng, dtype, product(c.shape))
				in := uploadAs(dev, dtype, x, c.shape, c.l)
				defer in.Release()
				a := (c.dim + len(c.shape)) % len(c.shape)
				for _, desc := range []bool{false, true} {
					wantV, wantI := refSortAlong(x, c.shape, a, desc)
					v, i := in.Sort(c.dim, desc, true)
					assert.Equal(t, c.shape, v.Shape())
					assert.Equal(t, Int32, i.DType())
					checkClose(t, wantV, read64(t, v), func(int) float64 { return 0 })
					checkClose(t, wantI, read64(t, i), func(int) float64 { return 0 })
					arg := in.Argsort(c.dim, desc, false)
					// Unstable order is unspecified: the values it gathers
					// must still be the sorted ones.
					gathered := in.Gather(c.dim, arg)
					checkClose(t, wantV, read64(t, gathered), func(int) float64 { return 0 })
					releaseAll(v, i, arg, gathered)
				}
			})
		}
	})
}

// TestTopKAndKthValue checks every k of short rows against the stable
// reference sort: TopK is its first k (descending for the largest, so NaN
// first; ascending for the smallest), KthValue its k-th ascending element,
// with keepDim either way.
func TestTopKAndKthValue(t *testing.T) { forEachDevice(t, testTopKAndKthValue) }

func testTopKAndKthValue(t *testing.T, dev *Device) {
	probe := func(dt DType) { v, i := Zeros(dev, 2).Cast(dt).TopK(1, 0, true, true); releaseAll(v, i) }
	forEachDType(t, dev, "TopK", probe, func(t *testing.T, dtype DType) {
		for _, c := range []sortCase{{[]int{7}, 0, packed}, {[]int{6, 5}, 0, transposed}, {[]int{3, 9, 2}, -2, strided}} {
			t.Run(fmt.Sprintf("%v/dim%d", c.shape, c.dim), func(t *testing.T) {
				rng := newRand(t)
				x := tieValues(rng, dtype, product(c.shape))
				in := uploadAs(dev, dtype, x, c.shape, c.l)
				defer in.Release()
				a := (c.dim + len(c.shape)) % len(c.shape)
				n := c.shape[a]
				for _, largest := range []bool{true, false} {
					sv, si := refSortAlong(x, c.shape, a, largest)
					for k := 1; k <= n; k++ {
						v, i := in.TopK(k, c.dim, largest, true)
						wantV, wantI := firstK(sv, c.shape, a, k), firstK(si, c.shape, a, k)
						checkClose(t, wantV, read64(t, v), func(int) float64 { return 0 })
						checkClose(t, wantI, read64(t, i), func(int) float64 { return 0 })
						releaseAll(v, i)
					}
				}
				sv, si := refSortAlong(x, c.shape, a, false)
				for k := 1; k <= n; k++ {
					for _, keep := range []bool{false, true} {
						v, i := in.KthValue(k, c.dim, keep)
						want := slices.Clone(c.shape)
						want[a] = 1
						if !keep {
							want = slices.Delete(want, a, a+1)
						}
						assert.Equal(t, want, v.Shape())
						assert.Equal(t, want, i.Shape())
						wantV, wantI := kthOf(sv, c.shape, a, k), kthOf(si, c.shape, a, k)
						checkClose(t, wantV, read64(t, v), func(int) float64 { return 0 })
						checkClose(t, wantI, read64(t, i), func(int) float64 { return 0 })
						releaseAll(v, i)
					}
				}
			})
		}
	})
}

// firstK keeps the first k elements along axis a of the row-major s.
func firstK(s []float64, shape []int, a, k int) []float64 {
	var out []float64
	inner := product(shape[a+1:])
	for o := 0; o < product(shape[:a]); o++ {
		for j := range k {
			base := (o*shape[a] + j) * inner
			out = append(out, s[base:base+inner]...)
		}
	}
	return out
}

// kthOf is element k−1 along axis a of the row-major s, axis dropped.
func kthOf(s []float64, shape []int, a, k int) []float64 {
	inner := product(shape[a+1:])
	var out []float64
	for o := 0; o < product(shape[:a]); o++ {
		base := (o*shape[a] + k - 1) * inner
		out = append(out, s[base:base+inner]...)
	}
	return out
}

// refScanAlong is a scan along axis a in float64 (wrapping int32 for
// Int32), with a tolerance scaled by the prefix's magnitude: Σ|x| for
// cumsum, |prefix|·length for cumprod, the largest |x| and |result| for
// logcumsumexp, times the compute type's unit roundoff (float32 for
// Float16) and the output's own rounding.
func refScanAlong(op string, x []float64, shape []int, a int, dtype DType) (want, tol []float64) {
	want, tol = make([]float64, len(x)), make([]float64, len(x))
	u := map[DType]float64{Float32: 0x1p-24, Float16: 0x1p-11, Float64: 0x1p-53}[dtype]
	uc := map[DType]float64{Float32: 0x1p-24, Float16: 0x1p-24, Float64: 0x1p-53}[dtype]
	lines(shape, a, func(pos []int) {
		acc, mag := map[string]float64{"Cumsum": 0, "Cumprod": 1, "LogCumSumExp": math.Inf(-1)}[op], 0.0
		iacc := int32(acc)
		for j, p := range pos {
			v := x[p]
			grow := 8*math.Sqrt(float64(j+1)) + 16
			switch op {
			case "Cumsum":
				acc += v
				iacc += int32(v)
				mag += math.Abs(v)
				tol[p] = u*math.Abs(acc) + grow*uc*mag
			case "Cumprod":
				acc *= v
				iacc *= int32(v)
				tol[p] = u*math.Abs(acc) + 2*float64(j+1)*uc*math.Abs(acc)
			default:
				hi, lo := max(acc, v), min(acc, v)
				switch {
				case math.IsNaN(acc) || math.IsNaN(v):
					acc = math.NaN()
				case math.IsInf(hi, 0) && hi == lo:
					acc = hi
				default:
					acc = hi + math.Log1p(math.Exp(lo-hi))
				}
				if !math.IsInf(v, 0) {
					mag = max(mag, math.Abs(v))
				}
				tol[p] = u*math.Abs(acc) + grow*uc*(mag+math.Abs(acc))
			}
			want[p] = acc
			if dtype == Int32 {
				want[p], tol[p] = float64(iacc), 0
			}
		}
	})
	return want, tol
}

// scanValues draws inputs for op: signed values with a few NaN and ±Inf
// (cumsum), factors near ±1 with zeros (cumprod), logits with −Inf runs
// (logcumsumexp); small integers for Int32.
func scanValues(rng *rand.Rand, op string, dtype DType, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch {
		case dtype == Int32 && op == "Cumprod":
			v[i] = []float64{-1, 1, 1, 2, -2, 1, 3}[rng.IntN(7)]
		case dtype == Int32:
			v[i] = float64(rng.IntN(2001) - 1000)
		case op == "Cumsum":
			v[i] = 2*rng.Float64() - 1
		case op == "Cumprod":
			v[i] = math.Exp(0.02*rng.Float64()-0.01) * float64(1-2*rng.IntN(2))
			if rng.IntN(50) == 0 {
				v[i] = 0
			}
		default:
			v[i] = 20*rng.Float64() - 10
			if rng.IntN(4) == 0 {
				v[i] = math.Inf(-1)
			}
		}
		if dtype.IsFloat() && rng.IntN(500) == 0 {
			v[i] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
		}
		v[i] = roundTo(dtype, v[i])
	}
	return v
}

func TestScanOps(t *testing.T) { forEachDevice(t, testScanOps) }

func testScanOps(t *testing.T, dev *Device) {
	scans := map[string]func(x *Tensor, dim int) *Tensor{
		"Cumsum": (*Tensor).Cumsum, "Cumprod": (*Tensor).Cumprod, "LogCumSumExp": (*Tensor).LogCumSumExp,
	}
	for _, op := range []string{"Cumsum", "Cumprod", "LogCumSumExp"} {
		t.Run(op, func(t *testing.T) {
			f := scans[op]
			probe := func(dt DType) { f(Zeros(dev, 2).Cast(dt), 0).Release() }
			forEachDType(t, dev, op, probe, func(t *testing.T, dtype DType) {
				for _, c := range sortCases() {
					t.Run(fmt.Sprintf("%v/dim%d/%v", c.shape, c.dim, c.l), func(t *testing.T) {
						rng := newRand(t)
						x := scanValues(rng, op, dtype, product(c.shape))
						in := uploadAs(dev, dtype, x, c.shape, c.l)
						defer in.Release()
						a := (c.dim + len(c.shape)) % len(c.shape)
						want, tol := refScanAlong(op, x, c.shape, a, dtype)
						out := f(in, c.dim)
						defer out.Release()
						assert.Equal(t, dtype, out.DType())
						checkClose(t, want, read64(t, out), func(i int) float64 { return tol[i] })
					})
				}
			})
		})
	}
}

// TestLogCumSumExpOfNegInfRows: a prefix of −Inf only is −Inf, not NaN
// (torch.logcumsumexp), and a later finite value takes over.
func TestLogCumSumExpOfNegInfRows(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		ninf := float32(math.Inf(-1))
		x := FromFloat32(dev, []float32{ninf, ninf, 0, ninf, ninf, ninf}, 2, 3)
		defer x.Release()
		y := x.LogCumSumExp(1)
		defer y.Release()
		got := read64(t, y)
		for i, w := range []float64{math.Inf(-1), math.Inf(-1), 0, math.Inf(-1), math.Inf(-1), math.Inf(-1)} {
			assert.Equal(t, w, got[i], "element %d", i)
		}
	})
}

// TestSortErrors: a dim out of range, a k out of range and a dtype the
// op is not defined for are *Errors naming the op, shape, dtype and
// device.
func TestSortErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		x := Zeros(dev, 3, 4)
		defer x.Release()
		for name, f := range map[string]func(){
			"Sort":         func() { x.Sort(2, false, false) },
			"Argsort":      func() { x.Argsort(-3, false, false) },
			"TopK":         func() { x.TopK(1, 5, true, true) },
			"KthValue":     func() { x.KthValue(1, -4, true) },
			"Cumsum":       func() { x.Cumsum(2) },
			"Cumprod":      func() { x.Cumprod(-3) },
			"LogCumSumExp": func() { x.LogCumSumExp(9) },
		} {
			err := Catch(f)
			var e *Error
			require.ErrorAs(t, err, &e, name)
			assert.Equal(t, name, e.Op)
			for _, part := range []string{"dim", "[3 4]", "float32", dev.Name()} {
				assert.Contains(t, err.Error(), part, name)
			}
		}
		for _, k := range []int{-1, 5} {
			err := Catch(func() { x.TopK(k, 1, true, true) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("k %d is out of range for dim 1 of size 4", k))
		}
		for _, k := range []int{0, 4} {
			err := Catch(func() { x.KthValue(k, 0, false) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("k %d is out of range for dim 0 of size 3", k))
		}
		ints := Zeros(dev, 3).Cast(Int32)
		defer ints.Release()
		err := Catch(func() { ints.LogCumSumExp(0) })
		require.ErrorIs(t, err, hal.ErrUnsupported)
		assert.True(t, strings.Contains(err.Error(), "LogCumSumExp") && strings.Contains(err.Error(), "int32"), err.Error())
	})
}

// TestSortOfAScalar: a 0-d tensor sorts, scans and picks as one element
// along dim 0 (or −1), as in torch.
func TestSortOfAScalar(t *testing.T) {
	dev := openCPU(t)
	one := FromFloat32(dev, []float32{2.5})
	x := one.Reshape()
	defer releaseAll(one, x)
	require.Empty(t, x.Shape())
	v, i := x.Sort(-1, true, true)
	kv, ki := x.KthValue(1, 0, false)
	c := x.Cumsum(0)
	defer releaseAll(v, i, kv, ki, c)
	for _, r := range []*Tensor{v, i, kv, ki, c} {
		assert.Empty(t, r.Shape())
	}
	assert.Equal(t, []float64{2.5}, read64(t, v))
	assert.Equal(t, []float64{0}, read64(t, i))
	assert.Equal(t, []float64{2.5}, read64(t, c))
}
