//go:build cgo

package wgpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
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

func TestMatMulShapes(t *testing.T) { forEachTestDevice(t, testMatMulShapes) }

func testMatMulShapes(t *testing.T, d *Device) {
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
func TestMatMulLongK(t *testing.T) { forEachTestDevice(t, testMatMulLongK) }

func testMatMulLongK(t *testing.T, d *Device) {
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
func TestMatMulManyBatches(t *testing.T) { forEachTestDevice(t, testMatMulManyBatches) }

func testMatMulManyBatches(t *testing.T, d *Device) {
	batch := int(d.limits.MaxComputeWorkgroupsPerDimension) + 3
	runMatMul(t, d, matmulCase{batch: []int{batch}, m: 1, k: 2, n: 1, alpha: 1, bBcast: []int{0}}, rand.New(rand.NewPCG(9, 10)))
}

func TestMatMulInvalid(t *testing.T) { forEachTestDevice(t, testMatMulInvalid) }

func testMatMulInvalid(t *testing.T, d *Device) {
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

// withMatMulVariant forces every MatMul onto c for the rest of the test.
func withMatMulVariant(t testing.TB, c matmulConfig) {
	prev := matmulOverride.Load()
	matmulOverride.Store(&c)
	t.Cleanup(func() { matmulOverride.Store(prev) })
}

// matmulVariants are the variants every shape test runs on.
func matmulVariants(d *Device) []matmulConfig {
	vs := []matmulConfig{{Kind: matmulClassic}}
	for _, c := range matmulTiles {
		// The warp-tiled tiles differ from their plain twins only in which
		// outputs an invocation computes: TestMatMulWarpTiles covers them
		// with fewer kernels (each compile takes seconds on lavapipe).
		if !d.fits(c) || c.Warp {
			continue
		}
		vs = append(vs, c)
		nv := c
		nv.NoVec = true
		vs = append(vs, nv)
	}
	s := matmulTiles[0]
	s.Split = 3
	vs = append(vs, s)
	// Prefetch on the small tile, vec4 and scalar staging, and split.
	for _, c := range []matmulConfig{matmulTiles[tile32x32], matmulTiles[tile64x64r8x4], s} {
		c.Prefetch = true
		vs = append(vs, c)
		c.NoVec = true
		vs = append(vs, c)
	}
	// Two stages and the swizzle apart, split, and on the 32×32 tile
	// (the swizzle at k8, k16 and k32: steps 4, 2 and 1).
	for _, c := range []matmulConfig{
		{WX: 8, WY: 8, TM: 4, TN: 4, BK: 16, Double: true},
		{WX: 8, WY: 8, TM: 4, TN: 4, BK: 16, Swizzle: true},
		{WX: 8, WY: 8, TM: 4, TN: 4, BK: 8, Double: true, Swizzle: true, Split: 3},
		{WX: 16, WY: 8, TM: 8, TN: 4, BK: 32, Double: true, Swizzle: true},
	} {
		if d.fits(c) {
			vs = append(vs, c)
			c.NoVec = true
			vs = append(vs, c)
		}
	}
	return vs
}

// TestMatMulVariants runs every variant, forced, over odd sizes,
// transposes, broadcast batches, alpha and beta, K = 0 and NaN in dst.
func TestMatMulVariants(t *testing.T) { forEachTestDevice(t, testMatMulVariants) }

func testMatMulVariants(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(11, 12))
	cases := []matmulCase{
		{m: 7, k: 5, n: 3, alpha: 1},
		{m: 33, k: 65, n: 100, alpha: 1},
		{m: 65, k: 130, n: 67, transA: true, alpha: 1},
		{m: 100, k: 33, n: 65, transB: true, alpha: 1},
		{m: 33, k: 17, n: 70, transA: true, transB: true, alpha: 1},
		{m: 64, k: 64, n: 64, alpha: 1},
		{m: 2, k: 1025, n: 5, alpha: 1},
		{m: 9, k: 0, n: 11, alpha: 1, beta: 0.5},
		{m: 20, k: 30, n: 40, alpha: 0.5, beta: 2},
		{m: 20, k: 30, n: 40, alpha: -1, nanDst: true},
		{batch: []int{2, 3}, m: 17, k: 19, n: 23, aBcast: []int{1}, alpha: 1},
		{batch: []int{2, 1, 3}, m: 5, k: 6, n: 7, aBcast: []int{0}, bBcast: []int{2}, transA: true, alpha: 1, beta: 1},
	}
	for _, v := range matmulVariants(d) {
		t.Run(v.String(), func(t *testing.T) {
			withMatMulVariant(t, v)
			for _, c := range cases {
				t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) { runMatMul(t, d, c, rng) })
			}
		})
	}
}

// TestMatMulVec4 covers the vec4 loads: operands whose offsets and strides
// are multiples of 4 (matrixView puts them at offset 5, which is not).
func TestMatMulVec4(t *testing.T) { forEachTestDevice(t, testMatMulVec4) }

func testMatMulVec4(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(13, 14))
	transposes := [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}
	for i, v := range matmulVariants(d)[1:] {
		// Every variant runs contiguous operands (the vec4 path) and one of
		// the three transposed layouts in turn, so that each layout meets
		// a third of the tiles: all four on every tile compiled for 20
		// minutes on lavapipe whenever the template changed (a cold shader
		// cache), past make test's budget.
		for _, tr := range [][2]bool{transposes[0], transposes[1+i%3]} {
			t.Run(fmt.Sprintf("%v-%v", v, tr), func(t *testing.T) {
				withMatMulVariant(t, v)
				m, k, n := 36, 44, 68
				a := randomMatrix(rng, m, k)
				b := randomMatrix(rng, k, n)
				av, bv := hal.Contiguous(upload32(t, d, a), hal.Float32, m, k), hal.Contiguous(upload32(t, d, b), hal.Float32, k, n)
				if tr[0] {
					av = swapLast(hal.Contiguous(upload32(t, d, transpose(a, m, k)), hal.Float32, k, m))
				}
				if tr[1] {
					bv = swapLast(hal.Contiguous(upload32(t, d, transpose(b, k, n)), hal.Float32, n, k))
				}
				dst := upload32(t, d, make([]float32, m*n))
				require.NoError(t, d.MatMul(hal.Contiguous(dst, hal.Float32, m, n), av, bv, 1, 0))
				got := downloadF32(t, d, dst, m*n)
				checkProduct(t, a, b, got, m, k, n)
			})
		}
	}
}

// swapLast transposes a matrix view without moving data.
func swapLast(v hal.View) hal.View {
	r := len(v.Shape)
	v.Shape[r-1], v.Shape[r-2] = v.Shape[r-2], v.Shape[r-1]
	v.Strides[r-1], v.Strides[r-2] = v.Strides[r-2], v.Strides[r-1]
	return v
}

func randomMatrix(rng *rand.Rand, rows, cols int) []float32 {
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func transpose(v []float32, rows, cols int) []float32 {
	out := make([]float32, len(v))
	for i := range rows {
		for j := range cols {
			out[j*rows+i] = v[i*cols+j]
		}
	}
	return out
}

// checkProduct compares got with a·b in float64.
func checkProduct(t *testing.T, a, b, got []float32, m, k, n int) {
	t.Helper()
	for i := range m {
		for j := range n {
			sum, mag := 0.0, 0.0
			for kk := range k {
				p := float64(a[i*k+kk]) * float64(b[kk*n+j])
				sum, mag = sum+p, mag+math.Abs(p)
			}
			if !assert.InDelta(t, sum, got[i*n+j], 1e-6*mag+1e-5, "[%d,%d]", i, j) {
				return
			}
		}
	}
}

// TestMatMulEpilogue records each variant with a hand-written epilogue
// that stores relu(v) + bias[column] + 1 into its own buffer, as the
// fusion engine would.
func TestMatMulEpilogue(t *testing.T) { forEachTestDevice(t, testMatMulEpilogue) }

func testMatMulEpilogue(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(15, 16))
	batch, m, k, n := 2, 33, 70, 17
	a := randomMatrix(rng, batch*m, k)
	b := randomMatrix(rng, k, n)
	bias := randomMatrix(rng, 1, n)
	aBuf, bBuf, biasBuf := upload32(t, d, a), upload32(t, d, b), upload32(t, d, bias)
	av := hal.Contiguous(aBuf, hal.Float32, batch, m, k)
	bv := hal.View{Buf: bBuf, DType: hal.Float32, Shape: []int{batch, k, n}, Strides: []int{0, n, 1}}
	decls := fmt.Sprintf(`@group(0) @binding(0) var<storage, read_write> o0: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
fn epilogue(i: u32, v: f32) { o0[i] = max(v, 0.0) + bias[i %% %du] + 1.0; }`, n)
	variants := append(matmulVariants(d), matmulConfig{Kind: matmulTiled, WX: 8, WY: 8, TM: 4, TN: 4, BK: 16, Split: 5})
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			withMatMulVariant(t, v)
			dst := upload32(t, d, make([]float32, batch*m*n))
			outBuf := upload32(t, d, make([]float32, batch*m*n))
			ops, err := d.operands(hal.KernelMatMul, hal.Contiguous(dst, hal.Float32, batch, m, n), av, bv)
			require.NoError(t, err)
			g := &gemm{d: d, out: ops[0], x: ops[1], y: ops[2], m: m, k: k, n: n, batch: batch, alpha: 0.5,
				batchShape: []int{batch}, batchStrides: [][]int{{m * k}, {0}}}
			epi := &epilogue{Key: "test-relu-bias", Decls: decls,
				Outputs: []*device.Allocation{outBuf.(*device.Buffer).Allocation()}, Inputs: []*device.Allocation{biasBuf.(*device.Buffer).Allocation()}}
			var ran bool
			g.producer = func(run func(*epilogue, sink) error) error { ran = true; return run(epi, sink{d: d}) }
			require.NoError(t, g.run(g.plan()))
			require.True(t, ran, "the variant goes through produce")
			got := downloadF32(t, d, outBuf, batch*m*n)
			for bi := range batch {
				for i := range m {
					for j := range n {
						sum, mag := 0.0, 0.0
						for kk := range k {
							p := float64(a[(bi*m+i)*k+kk]) * float64(b[kk*n+j])
							sum, mag = sum+p, mag+math.Abs(p)
						}
						want := math.Max(0.5*sum, 0) + float64(bias[j]) + 1
						if !assert.InDelta(t, want, got[(bi*m+i)*n+j], 1e-6*mag+1e-5, "[%d,%d,%d]", bi, i, j) {
							return
						}
					}
				}
			}
		})
	}
}

// TestMatMulFloat16Renders renders the float16 tiled and split-K kernels
// (llvmpipe lacks shader-f16), validates them with tint when it is on
// PATH, and compiles each on every device with f16 spelled f32.
func TestMatMulFloat16Renders(t *testing.T) {
	sources := map[string]string{}
	for _, c := range matmulTiles {
		for flags := range 16 {
			sh := newTiledShader(c, "f16", "f16")
			sh.AK, sh.BKFast, sh.VecA, sh.VecB = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
			sh.Split = flags == 5
			sh.bind(nil)
			sh.loads()
			src, err := render("matmul_tiled.wgsl", sh)
			require.NoError(t, err)
			sources[fmt.Sprintf("tiled-%v-%d", c, flags)] = src
		}
	}
	rs := matmulShader{Dst: "f16", Tile: 64, Enable: enableF16Types("f16")}
	rs.bind(nil)
	src, err := render("matmul_splitk.wgsl", rs)
	require.NoError(t, err)
	sources["splitk"] = src
	for name, src := range sources {
		require.True(t, strings.HasPrefix(src, "enable f16;\n"), "%s: the directive comes first", name)
		assert.NotContains(t, src, "<no value>", name)
	}
	// The rendering does not depend on the device: validated once.
	validateWithTint(t, sources)
	f16Bits := regexp.MustCompile(`bitcast<vec2<f16>>\(([^)]*)\)`)
	forEachTestDevice(t, func(t *testing.T, d *Device) {
		for name, src := range sources {
			as32 := strings.TrimPrefix(src, "enable f16;\n")
			as32 = f16Bits.ReplaceAllString(as32, "bitcast<vec2<f32>>(vec2<u32>($1, 0u))")
			as32 = strings.ReplaceAll(as32, "f16", "f32")
			_, err := d.rt.Kernel("f16-as-f32 "+name, 3, 1, func() (string, error) { return as32, nil })
			require.NoError(t, err, "%s:\n%s", name, as32)
		}
	})
}
