//go:build cgo

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/webtensor/webtensor/hal"
)

// The two-stage (Double) and swizzled (Swizzle) tiles, each forced, over
// odd sizes (1, 7, 33, 129, 257 along each of M, N and K), transposes,
// batches, vec4 and scalar staging, float16 storage where the adapter
// has it, against float64.

// stagedTiles are the tiles of matmulTiles with two stages or the swizzle
// (the warp-tiled ones apart: TestMatMulWarpTiles).
func stagedTiles() []matmulConfig {
	return tilesWhere(func(c matmulConfig) bool { return (c.Double || c.Swizzle) && !c.Warp })
}

// warpTiles are the tiles of matmulTiles with the warp layout.
func warpTiles() []matmulConfig { return tilesWhere(func(c matmulConfig) bool { return c.Warp }) }

// tilesWhere are the tiles of matmulTiles that keep accepts.
func tilesWhere(keep func(matmulConfig) bool) []matmulConfig {
	var cs []matmulConfig
	for _, c := range matmulTiles {
		if keep(c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// fitsStaged requires that c runs on d when d has the 32 KiB of workgroup
// memory that every staged tile needs (both software adapters, every
// GPU), so that no tile is skipped silently.
func fitsStaged(t *testing.T, d *Device, c matmulConfig) bool {
	if d.limits.MaxComputeWorkgroupStorageSize >= 32<<10 && d.limits.MaxComputeInvocationsPerWorkgroup >= 256 {
		require.True(t, d.fits(c), "%v", c)
	}
	return d.fits(c)
}

func TestMatMulStagedTiles(t *testing.T) { forEachTestDevice(t, testMatMulStagedTiles) }

func testMatMulStagedTiles(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(31, 32))
	// Offset 5: scalar staging. Each of 1, 7, 33, 129, 257 along M, K
	// and N, every transpose, batches with a broadcast operand.
	strided := []matmulCase{
		{m: 1, k: 257, n: 7, alpha: 1},
		{m: 7, k: 1, n: 33, transB: true, alpha: 1, beta: 0.5},
		{m: 33, k: 7, n: 129, transA: true, alpha: 1},
		{m: 129, k: 33, n: 257, transA: true, transB: true, alpha: -0.5},
		{m: 257, k: 129, n: 1, alpha: 1, nanDst: true},
		{batch: []int{3}, m: 33, k: 129, n: 7, bBcast: []int{0}, alpha: 1},
		{batch: []int{2, 2}, m: 7, k: 33, n: 129, aBcast: []int{1}, transB: true, alpha: 1, beta: 1},
	}
	// Offset 0 and fast axes of multiples of 4: vec4 staging, the other
	// axes odd.
	contiguous := []struct {
		batch, m, k, n int
		transA, transB bool
	}{
		{1, 129, 260, 68, false, false},
		{1, 257, 36, 132, false, true},
		{1, 132, 33, 257, true, false},
		{1, 36, 129, 68, true, true},
		{3, 33, 132, 36, false, false},
		{2, 68, 257, 36, false, true},
	}
	for _, c := range stagedTiles() {
		if !fitsStaged(t, d, c) {
			continue
		}
		scalar := c
		scalar.NoVec = true
		for _, v := range []matmulConfig{c, scalar} {
			t.Run(v.String(), func(t *testing.T) {
				withMatMulVariant(t, v)
				for _, mc := range strided {
					t.Run(fmt.Sprintf("%+v", mc), func(t *testing.T) { runMatMul(t, d, mc, rng) })
				}
				for _, cc := range contiguous {
					t.Run(fmt.Sprintf("contiguous%+v", cc), func(t *testing.T) {
						runContiguousMatMul(t, d, hal.Float32, cc.batch, cc.m, cc.k, cc.n, cc.transA, cc.transB, rng)
					})
				}
			})
		}
	}
}

// TestMatMulStagedFloat16 runs the staged tiles on float16 storage (f32
// math) where the adapter has shader-f16 (lavapipe).
func TestMatMulStagedFloat16(t *testing.T) { forEachTestDevice(t, testMatMulStagedFloat16) }

func testMatMulStagedFloat16(t *testing.T, d *Device) {
	if d.supports(hal.KernelMatMul, hal.Float16) != nil {
		t.Skipf("%s has no shader-f16", d.info.Name)
	}
	rng := rand.New(rand.NewPCG(33, 34))
	for _, c := range stagedTiles() {
		if !fitsStaged(t, d, c) {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			withMatMulVariant(t, c)
			runContiguousMatMul(t, d, hal.Float16, 1, 129, 68, 260, false, false, rng)
			runContiguousMatMul(t, d, hal.Float16, 2, 33, 257, 36, true, true, rng)
			runContiguousMatMul(t, d, hal.Float16, 1, 7, 33, 129, false, true, rng)
		})
	}
}

// runContiguousMatMul multiplies batch random m×k and k×n matrices of dtype
// dt (Float32 or Float16) stored contiguously from offset 0, each
// transposed in memory when asked, and checks dst against float64 on the
// stored (rounded) inputs.
func runContiguousMatMul(t *testing.T, d *Device, dt hal.DType, batch, m, k, n int, transA, transB bool, rng *rand.Rand) {
	t.Helper()
	size := dt.Size()
	put := func(raw []byte, i int, v float64) float64 {
		if dt == hal.Float16 {
			h := float16.Fromfloat32(float32(v))
			binary.LittleEndian.PutUint16(raw[2*i:], h.Bits())
			return float64(h.Float32())
		}
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
		return float64(float32(v))
	}
	get := func(raw []byte, i int) float64 {
		if dt == hal.Float16 {
			return float64(float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32())
		}
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	alloc := func(elems int) hal.Buffer {
		b, err := d.Alloc(int64((elems*size + 15) / 16 * 16))
		require.NoError(t, err)
		t.Cleanup(func() { d.Free(b) })
		return b
	}
	// matrix fills [batch, rows, cols] with random values, stored as
	// [batch, cols, rows] when trans, and returns its view and values
	// (row-major over [batch, rows, cols]).
	matrix := func(rows, cols int, trans bool) (hal.View, []float64) {
		raw := make([]byte, (batch*rows*cols*size+15)/16*16)
		vals := make([]float64, batch*rows*cols)
		for b := range batch {
			for i := range rows {
				for j := range cols {
					at := b*rows*cols + i*cols + j
					if trans {
						at = b*rows*cols + j*rows + i
					}
					vals[b*rows*cols+i*cols+j] = put(raw, at, rng.NormFloat64())
				}
			}
		}
		buf := alloc(batch * rows * cols)
		require.NoError(t, d.Write(buf, raw))
		if trans {
			return swapLast(hal.Contiguous(buf, dt, batch, cols, rows)), vals
		}
		return hal.Contiguous(buf, dt, batch, rows, cols), vals
	}
	av, a := matrix(m, k, transA)
	bv, b := matrix(k, n, transB)
	dst := alloc(batch * m * n)
	require.NoError(t, d.MatMul(hal.Contiguous(dst, dt, batch, m, n), av, bv, 1, 0))
	raw := make([]byte, (batch*m*n*size+15)/16*16)
	require.NoError(t, d.Read(dst, raw))
	for bi := range batch {
		for i := range m {
			for j := range n {
				sum, mag := 0.0, 0.0
				for kk := range k {
					p := a[bi*m*k+i*k+kk] * b[bi*k*n+kk*n+j]
					sum += p
					mag += math.Abs(p)
				}
				tol := 1e-6*mag + 1e-5
				if dt == hal.Float16 { // the f32 sum rounded to f16
					tol += math.Abs(sum) / 1024
				}
				if !assert.InDelta(t, sum, get(raw, (bi*m+i)*n+j), tol, "%v batch %d [%d,%d]", dt, bi, i, j) {
					return
				}
			}
		}
	}
}

// TestMatMulTileEnv: WEBTENSOR_MATMUL_TILE's names are the tiles' String,
// each tile's and its Prefetch twin's, and plan takes the named tile for
// M, N > 1 (the dot-product reduction keeps vectors).
func TestMatMulTileEnv(t *testing.T) {
	for _, c := range matmulTiles {
		for _, p := range []bool{false, true} {
			c.Prefetch = p
			got := matmulTileNamed(c.String())
			require.NotNil(t, got, c.String())
			assert.Equal(t, c, *got)
		}
	}
	assert.Nil(t, matmulTileNamed(""))
	assert.Nil(t, matmulTileNamed("tiled16x16-8x8-k16-nonesuch"))

	forEachTestDevice(t, func(t *testing.T, d *Device) {
		named := matmulTiles[tile64x64r8x4db]
		prev := matmulEnvTile
		matmulEnvTile = func() *matmulConfig { return &named }
		t.Cleanup(func() { matmulEnvTile = prev })
		g := &gemm{d: d, out: operand{View: hal.View{DType: hal.Float32}}, m: 300, k: 40, n: 20, batch: 1}
		assert.Equal(t, named, g.plan().config)
		g.n = 1
		assert.Equal(t, matmulVector, g.plan().config.Kind)
		runMatMul(t, d, matmulCase{m: 33, k: 129, n: 7, transA: true, alpha: 1}, rand.New(rand.NewPCG(35, 36)))
	})
}

// TestMatMulStagedCandidates: the GPU autotuner times every staged tile
// at the sizes (1024², 4096², the 64×256³ bmm), within its bound.
func TestMatMulStagedCandidates(t *testing.T) {
	forEachTestDevice(t, func(t *testing.T, d *Device) {
		withHardwareGEMM(t)
		for _, sz := range [][4]int{{1, 1024, 1024, 1024}, {1, 4096, 4096, 4096}, {64, 256, 256, 256}} {
			cands := d.matmulCandidates(sz[0], sz[1], sz[2], sz[3])
			assert.LessOrEqual(t, len(cands), 2*len(matmulTiles)+2, "%v", sz)
			for _, c := range stagedTiles() {
				if fitsStaged(t, d, c) {
					assert.Contains(t, cands, c, "%v", sz)
				}
			}
		}
	})
}

// TestMatMulWarpTiles runs each warp-tiled tile, forced, on the three
// staging paths a GPU run takes or may take: contiguous vec4 operands
// (the benchmark's), both operands transposed at an odd offset (scalar
// staging with the stash transposing b), and a batch with a broadcast
// b; sizes one past a 128 block along M and N and K off the k step, so
// that every warp of the block, partial blocks and the k tail are
// checked against float64. The tile whose Prefetch twin is another
// kernel (WEBTENSOR_MATMUL_TILE may name it) runs once without Prefetch.
// Few kernels: each compiles for seconds on lavapipe.
func TestMatMulWarpTiles(t *testing.T) { forEachTestDevice(t, testMatMulWarpTiles) }

func testMatMulWarpTiles(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(37, 38))
	require.Len(t, warpTiles(), 4)
	for _, c := range warpTiles() {
		if !fitsStaged(t, d, c) {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			withMatMulVariant(t, c)
			runContiguousMatMul(t, d, hal.Float32, 1, 129, 260, 68, false, false, rng)
			runMatMul(t, d, matmulCase{m: 129, k: 33, n: 257, transA: true, transB: true, alpha: -0.5, beta: 0.5}, rng)
			runMatMul(t, d, matmulCase{batch: []int{3}, m: 33, k: 129, n: 7, bBcast: []int{0}, alpha: 1, nanDst: true}, rng)
		})
	}
	twin := matmulTiles[tile64x64r8x4w]
	twin.Prefetch = false
	t.Run(twin.String(), func(t *testing.T) {
		withMatMulVariant(t, twin)
		runContiguousMatMul(t, d, hal.Float32, 2, 68, 257, 36, false, true, rng)
	})
}

// TestMatMulWarpCandidates: the GPU autotuner times every warp-tiled
// tile at the sizes, as WEBTENSOR_MATMUL_TILE names them; a CPU
// adapter's autotuner leaves them out.
func TestMatMulWarpCandidates(t *testing.T) {
	forEachTestDevice(t, func(t *testing.T, d *Device) {
		if !d.hardwareGEMM() {
			cands := d.matmulCandidates(1, 1024, 1024, 1024)
			for _, c := range warpTiles() {
				assert.NotContains(t, cands, c)
			}
		}
		withHardwareGEMM(t)
		for _, sz := range [][4]int{{1, 1024, 1024, 1024}, {1, 4096, 4096, 4096}, {64, 256, 256, 256}} {
			cands := d.matmulCandidates(sz[0], sz[1], sz[2], sz[3])
			for _, c := range warpTiles() {
				if fitsStaged(t, d, c) {
					assert.Contains(t, cands, c, "%v", sz)
					assert.Equal(t, &c, matmulTileNamed(c.String()))
				}
			}
		}
		// The layout needs whole warps of 8×4 invocations.
		narrow := matmulConfig{WX: 4, WY: 8, TM: 4, TN: 4, BK: 16}
		require.True(t, d.fits(narrow))
		narrow.Warp = true
		assert.False(t, d.fits(narrow))
	})
}
