//go:build cgo

package wgpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// matmulCase is one MatMul: a [batch…, M, K] and b [batch…, K, N] as views
// (transposed when asked, broadcast along batch axes listed in aBcast /
// bBcast) over buffers of random values.
type matmulCase struct {
	batch          []int
	m, k, n        int
	transA, transB bool
	aBcast, bBcast []int // batch axes with stride 0
	alpha, beta    float64
	nanDst         bool // dst starts as NaN (beta must be 0)
}

// matrixView lays out [batch…, rows, cols] in a fresh buffer, transposed
// with rows stored fastest when trans, with stride 0 on the
// bcast axes, at offset 5.
func matrixView(batch []int, rows, cols int, trans bool, bcast []int) hal.View {
	shape := append(append([]int{}, batch...), rows, cols)
	stored := append(append([]int{}, batch...), rows, cols)
	for _, ax := range bcast {
		stored[ax] = 1
	}
	r := len(shape)
	if trans {
		stored[r-2], stored[r-1] = cols, rows
	}
	st := hal.RowMajorStrides(stored)
	strides := append([]int{}, st...)
	if trans {
		strides[r-2], strides[r-1] = st[r-1], st[r-2]
	}
	for _, ax := range bcast {
		strides[ax] = 0
	}
	return hal.View{DType: hal.Float32, Shape: shape, Strides: strides, Offset: 5}
}

// at returns the element of a view at a row-major linear index.
func at(vals []float64, v hal.View, lin int) float64 {
	off := v.Offset
	for a := len(v.Shape) - 1; a >= 0; a-- {
		off += lin % v.Shape[a] * v.Strides[a]
		lin /= v.Shape[a]
	}
	return vals[off]
}

func runMatMul(t *testing.T, d *Device, c matmulCase, rng *rand.Rand) {
	t.Helper()
	av := matrixView(c.batch, c.m, c.k, c.transA, c.aBcast)
	bv := matrixView(c.batch, c.k, c.n, c.transB, c.bBcast)
	fill := func(v hal.View) ([]float64, hal.Buffer) {
		vals := make([]float64, v.Offset+v.Span())
		f := make([]float32, len(vals))
		for i := range vals {
			f[i] = float32(rng.NormFloat64())
			vals[i] = float64(f[i])
		}
		return vals, upload32(t, d, f)
	}
	aVals, aBuf := fill(av)
	defer d.Free(aBuf)
	bVals, bBuf := fill(bv)
	defer d.Free(bBuf)
	av.Buf, bv.Buf = aBuf, bBuf

	outShape := append(append([]int{}, c.batch...), c.m, c.n)
	dv := hal.View{DType: hal.Float32, Shape: outShape, Strides: hal.RowMajorStrides(outShape), Offset: 2}
	size := dv.Offset + dv.Elements()
	old := make([]float32, size)
	for i := range old {
		old[i] = float32(rng.NormFloat64())
		if c.nanDst {
			old[i] = float32(math.NaN())
		}
	}
	dBuf := upload32(t, d, old)
	defer d.Free(dBuf)
	dv.Buf = dBuf
	require.NoError(t, d.MatMul(dv, av, bv, c.alpha, c.beta))
	got := downloadF32(t, d, dBuf, size)

	batches := hal.View{Shape: c.batch}.Elements()
	for bi := range batches {
		for i := range c.m {
			for j := range c.n {
				sum, mag := 0.0, 0.0
				for kk := range c.k {
					p := at(aVals, av, (bi*c.m+i)*c.k+kk) * at(bVals, bv, (bi*c.k+kk)*c.n+j)
					sum += p
					mag += math.Abs(p)
				}
				o := dv.Offset + (bi*c.m+i)*c.n + j
				want := c.alpha * sum
				if c.beta != 0 {
					want += c.beta * float64(old[o])
				}
				tol := 1e-6*math.Abs(c.alpha)*mag + 1e-5
				if !assert.InDelta(t, want, got[o], tol, "batch %d [%d,%d]", bi, i, j) {
					return
				}
			}
		}
	}
	for i := range dv.Offset {
		assert.Equal(t, math.Float32bits(old[i]), math.Float32bits(got[i]), "element %d before dst is untouched", i)
	}
}

func TestMatMulShapes(t *testing.T) {
	d := openTestDevice(t)
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []matmulCase{
		{m: 1, k: 1, n: 1, alpha: 1},
		{m: 7, k: 5, n: 3, alpha: 1},
		{m: 64, k: 64, n: 64, alpha: 1},
		{m: 65, k: 130, n: 67, alpha: 1},
		{m: 65, k: 130, n: 67, transA: true, alpha: 1},
		{m: 65, k: 33, n: 67, transB: true, alpha: 1},
		{m: 33, k: 17, n: 70, transA: true, transB: true, alpha: 1},
		{m: 300, k: 257, n: 1, alpha: 1},                 // GEMV
		{m: 300, k: 257, n: 1, transA: true, alpha: 1},   // GEMV, column-major a
		{m: 1, k: 257, n: 300, alpha: 1},                 // vector · matrix
		{m: 129, k: 1, n: 131, alpha: 1},                 // outer product
		{m: 9, k: 0, n: 11, alpha: 1, beta: 0.5},         // K = 0 scales dst
		{m: 20, k: 30, n: 40, alpha: 0.5, beta: 2},       // both scales
		{m: 20, k: 30, n: 40, alpha: -1, nanDst: true},   // beta 0 ignores NaN
		{batch: []int{3}, m: 17, k: 19, n: 23, alpha: 1}, // batched
		{batch: []int{2, 3}, m: 17, k: 19, n: 23, aBcast: []int{1}, alpha: 1},
		{batch: []int{2, 3}, m: 17, k: 19, n: 23, bBcast: []int{0}, transB: true, alpha: 1},
		{batch: []int{2, 1, 3, 2}, m: 5, k: 6, n: 7, aBcast: []int{0, 3}, bBcast: []int{2}, transA: true, alpha: 1, beta: 1},
		{batch: []int{2, 2, 2, 2, 2, 2}, m: 3, k: 4, n: 5, bBcast: []int{1, 4}, alpha: 1}, // batch rank MaxRank−2
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) { runMatMul(t, d, c, rng) })
	}
}

// TestMatMulLongK walks K in several passes (llvmpipe's loop limit).
func TestMatMulLongK(t *testing.T) {
	d := openTestDevice(t)
	rng := rand.New(rand.NewPCG(7, 8))
	chunk := matmulChunk(d.matmulTile())
	// The last K passes 65,536 tile steps: one pass would stop early on
	// llvmpipe even if its compiler unrolls the inner T-step loop.
	for _, k := range []int{chunk, chunk + 1, 2*chunk + 5, 65536*d.matmulTile() + 7} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			runMatMul(t, d, matmulCase{m: 3, k: k, n: 2, alpha: 1, beta: 0.5}, rng)
			if k < 1<<20 {
				runMatMul(t, d, matmulCase{m: 2, k: k, n: 3, transA: true, alpha: 2, nanDst: true}, rng)
			}
		})
	}
}

// TestMatMulManyBatches needs more workgroups along the batch than one
// grid dimension holds.
func TestMatMulManyBatches(t *testing.T) {
	d := openTestDevice(t)
	batch := int(d.limits.MaxComputeWorkgroupsPerDimension) + 3
	runMatMul(t, d, matmulCase{batch: []int{batch}, m: 1, k: 2, n: 1, alpha: 1, bBcast: []int{0}}, rand.New(rand.NewPCG(9, 10)))
}

func TestMatMulInvalid(t *testing.T) {
	d := openTestDevice(t)
	buf, err := d.Alloc(4096)
	require.NoError(t, err)
	defer d.Free(buf)
	other, err := d.Alloc(4096)
	require.NoError(t, err)
	defer d.Free(other)
	v := func(b hal.Buffer, shape ...int) hal.View { return hal.Contiguous(b, hal.Float32, shape...) }
	assert.ErrorIs(t, d.MatMul(v(other, 2, 3), v(buf, 2, 4), v(buf, 5, 3), 1, 0), hal.ErrInvalid)
	assert.ErrorIs(t, d.MatMul(v(buf, 2, 3), v(buf, 2, 4), v(other, 4, 3), 1, 0), hal.ErrInvalid, "dst aliases a")
	assert.ErrorIs(t, d.MatMul(v(other, 3), v(buf, 3), v(buf, 3), 1, 0), hal.ErrInvalid, "rank 1")
	assert.NoError(t, d.MatMul(v(other, 2, 3), v(buf, 2, 4), v(buf, 4, 3), 1, 0), "a and b may share a buffer")
	assert.NoError(t, d.MatMul(v(other, 0, 3), v(buf, 0, 4), v(buf, 4, 3), 1, 0), "empty")
}
