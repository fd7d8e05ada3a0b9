//go:build cgo

package wgpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

// These tests run the oversize paths (chunk*.go) on a second device of
// each adapter whose binding limit is lowered to chunkWindow, so that
// tensors of tens of thousands of elements take several windows, and
// compare every result with the same op on the adapter's shared device,
// where it runs in one binding, and with float64 references computed here.

const chunkWindow = 64 << 10 // 16,384 float32 elements per window

// chunkDevices are the windowed devices, one per adapter: a device whose
// maxStorageBufferBindingSize is chunkWindow.
var chunkDevices = &deviceCache{open: func(index int) (*Device, error) {
	d, err := openDevice(index)
	if err == nil {
		d.limits.MaxStorageBufferBindingSize = chunkWindow
	}
	return d, err
}}

// chunkPair is one adapter's windowed device and its shared device.
type chunkPair struct{ small, big *Device }

// forEachChunkPair runs f as a subtest per adapter on its two devices.
func forEachChunkPair(t *testing.T, f func(t *testing.T, p chunkPair)) {
	forEachTestAdapter(t, func(t *testing.T, a adapters.Adapter) {
		f(t, chunkPair{small: chunkDevices.get(t, a), big: testDevice(t, a)})
	})
}

// dispatchesOf counts the dispatches f records on d.
func dispatchesOf(t *testing.T, d *Device, f func()) int64 {
	t.Helper()
	require.NoError(t, d.Sync())
	before := d.Stats().Dispatches
	f()
	require.NoError(t, d.Sync())
	return d.Stats().Dispatches - before
}

// run runs f on the windowed device and on the shared one and returns
// both results.
func (p chunkPair) run(f func(d *Device) []float64) (small, big []float64) {
	return f(p.small), f(p.big)
}

func TestChunkElementwise(t *testing.T) { forEachChunkPair(t, testChunkElementwise) }

func testChunkElementwise(t *testing.T, p chunkPair) {
	r := rand.New(rand.NewPCG(1, 2))
	// Element counts: past the window's start only (one window), two
	// windows, and an odd number of them.
	for _, tc := range []struct {
		name   string
		n, off int
		pieces int64
	}{
		{"one", 9000, 20000, 1},
		{"two", 30000, 0, 2},
		{"five", 5*16384 - 17, 3, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := nnRandoms(r, tc.n), nnRandoms(r, tc.n)
			var pieces int64
			small, big := p.run(func(d *Device) []float64 {
				av := nnPut(t, d, hal.Float32, a, []int{tc.n}, []int{1}, tc.off)
				bv := nnPut(t, d, hal.Float32, b, []int{tc.n}, []int{1}, tc.off)
				out := nnPut(t, d, hal.Float32, make([]float64, tc.n), []int{tc.n}, []int{1}, tc.off)
				n := dispatchesOf(t, d, func() {
					require.NoError(t, d.Binary(hal.Add, out, av, bv))
					require.NoError(t, d.Unary(hal.Exp, out, out, hal.Args{})) // in place
				})
				if d == p.small {
					pieces = n
				}
				return nnGet(t, d, out)
			})
			assert.Equal(t, 2*tc.pieces, pieces, "dispatches on the windowed device")
			require.Equal(t, big, small)
			for i := range a {
				want := math.Exp(float64(float32(a[i] + b[i])))
				require.InDelta(t, want, small[i], 1e-5*want, "element %d", i)
			}
		})
	}
}

// TestChunkBroadcastStrided covers operands that are not offset + i: a row
// broadcast over rows (stride 0) that a pending fused op produced, a
// transposed source, and a strided destination of Copy, plus Where, Fill
// and Random, whose values depend on the index.
func TestChunkBroadcastStrided(t *testing.T) { forEachChunkPair(t, testChunkBroadcastStrided) }

func testChunkBroadcastStrided(t *testing.T, p chunkPair) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, cols = 171, 233 // 39,843 elements: 3 windows
	x, row := nnRandoms(r, rows*cols), nnRandoms(r, cols)
	cond := make([]float64, rows*cols)
	for i := range cond {
		cond[i] = float64(r.IntN(2))
	}
	type result struct{ add, tr, strided, where, fill, ifill, random []float64 }
	run := func(d *Device) result {
		var res result
		xv := nnContig(t, d, hal.Float32, x, rows, cols)
		rv := nnContig(t, d, hal.Float32, row, cols)
		// Negated lazily: the chunked Add must see the fused group's store.
		require.NoError(t, d.Unary(hal.Neg, rv, rv, hal.Args{}))
		bc := hal.View{Buf: rv.Buf, DType: hal.Float32, Shape: []int{rows, cols}, Strides: []int{0, 1}}
		out := nnOutput(t, d, hal.Float32, rows, cols)
		require.NoError(t, d.Binary(hal.Add, out, xv, bc))
		res.add = nnGet(t, d, out)

		tr := hal.View{Buf: xv.Buf, DType: hal.Float32, Shape: []int{cols, rows}, Strides: []int{1, cols}}
		out2 := nnOutput(t, d, hal.Float32, cols, rows)
		require.NoError(t, d.Copy(out2, tr))
		res.tr = nnGet(t, d, out2)

		// Every other element of a 2·n buffer, from offset 5.
		wide := nnOutput(t, d, hal.Float32, 2*rows*cols+5)
		sv := hal.View{Buf: wide.Buf, DType: hal.Float32, Offset: 5, Shape: []int{rows, cols}, Strides: []int{2 * cols, 2}}
		require.NoError(t, d.Copy(sv, xv))
		res.strided = nnGet(t, d, wide)

		cv := nnContig(t, d, hal.Int32, cond, rows, cols)
		out3 := nnOutput(t, d, hal.Float32, rows, cols)
		require.NoError(t, d.Where(out3, cv, xv, bc))
		res.where = nnGet(t, d, out3)

		out4 := nnOutput(t, d, hal.Float32, rows, cols)
		require.NoError(t, d.Fill(out4, -3.25, 0.125))
		res.fill = nnGet(t, d, out4)
		out5 := nnOutput(t, d, hal.Int32, rows, cols)
		require.NoError(t, d.Fill(out5, -7, 3))
		res.ifill = nnGet(t, d, out5)
		out6 := nnOutput(t, d, hal.Float32, rows, cols)
		require.NoError(t, d.Random(out6, hal.Uniform, 0, 42, 1000))
		res.random = nnGet(t, d, out6)
		return res
	}
	small, big := run(p.small), run(p.big)
	assert.Equal(t, big, small)
	for i := range rows {
		for j := range cols {
			k := i*cols + j
			require.Equal(t, float64(float32(x[k]-row[j])), small.add[k])
			require.Equal(t, x[k], small.tr[j*rows+i])
			require.Equal(t, x[k], small.strided[5+2*k])
			want := -row[j]
			if cond[k] != 0 {
				want = x[k]
			}
			require.Equal(t, want, small.where[k])
			require.Equal(t, -3.25+0.125*float64(k), small.fill[k])
			require.Equal(t, float64(-7+3*k), small.ifill[k])
		}
	}
	for k := range small.strided {
		if k < 5 || (k-5)%2 != 0 {
			require.Equal(t, 99.0, small.strided[k], "element %d is not in the view", k)
		}
	}
}

// chunkReduceRef folds vals as op does, in float64.
func chunkReduceRef(op hal.ReduceOp, vals []float64) float64 {
	acc := map[hal.ReduceOp]float64{hal.Sum: 0, hal.Prod: 1, hal.Max: math.Inf(-1), hal.Min: math.Inf(1)}[op]
	best := 0
	for i, v := range vals {
		switch op {
		case hal.Sum:
			acc += v
		case hal.Prod:
			acc *= v
		case hal.Max:
			acc = math.Max(acc, v)
		case hal.Min:
			acc = math.Min(acc, v)
		case hal.ArgMax:
			if v > vals[best] {
				best = i
			}
		case hal.ArgMin:
			if v < vals[best] {
				best = i
			}
		case hal.LogSumExp:
			acc += math.Exp(v)
		}
	}
	switch op {
	case hal.ArgMax, hal.ArgMin:
		return float64(best)
	case hal.LogSumExp:
		return math.Log(acc)
	}
	return acc
}

func TestChunkReduce(t *testing.T) { forEachChunkPair(t, testChunkReduce) }

func testChunkReduce(t *testing.T, p chunkPair) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name       string
		rows, n    int
		transposed bool // the source is the transpose of an n×rows array
	}{
		{"rows-fit", 100, 301, false},  // 30,100 elements: whole rows per window
		{"long-rows", 3, 40001, false}, // each row spans 3 windows
		{"one-long-row", 1, 5*16384 + 9, false},
		{"transposed", 37, 1001, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([]float64, tc.rows*tc.n)
			for i := range vals {
				// Few distinct values: argmax and argmin meet ties across
				// pieces, and products stay finite.
				vals[i] = 1 + float64(r.IntN(9)-4)/4096
			}
			shape, strides := []int{tc.rows, tc.n}, []int{tc.n, 1}
			if tc.transposed {
				strides = []int{1, tc.rows}
			}
			for _, op := range hal.ReduceOps {
				dtype := hal.Float32
				if op == hal.ArgMax || op == hal.ArgMin {
					dtype = hal.Int32
				}
				small, big := p.run(func(d *Device) []float64 {
					// Stored as laid out: element (i, j) at i·strides[0] + j·strides[1].
					src := nnPut(t, d, hal.Float32, vals, shape, strides, 7)
					out := nnOutput(t, d, dtype, tc.rows)
					require.NoError(t, d.Reduce(op, out, src, 1), "%v", op)
					return nnGet(t, d, out)
				})
				for i := range tc.rows {
					want := chunkReduceRef(op, vals[i*tc.n:(i+1)*tc.n])
					switch op {
					case hal.ArgMax, hal.ArgMin, hal.Max, hal.Min:
						require.Equal(t, want, small[i], "%v row %d", op, i)
						require.Equal(t, big[i], small[i], "%v row %d", op, i)
					case hal.Prod:
						require.InDelta(t, want, small[i], 2e-4*math.Abs(want), "%v row %d", op, i)
					default:
						require.InDelta(t, want, small[i], 2e-5*math.Abs(want)+1e-4, "%v row %d", op, i)
					}
				}
			}
		})
	}
}

func TestChunkReduceInt32(t *testing.T) { forEachChunkPair(t, testChunkReduceInt32) }

func testChunkReduceInt32(t *testing.T, p chunkPair) {
	d := p.small
	const n = 3*16384 + 5
	vals := make([]float64, n)
	sum := 0.0
	for i := range vals {
		vals[i] = float64(i%1000 - 500)
		sum += vals[i]
	}
	src := nnContig(t, d, hal.Int32, vals, n)
	out := nnOutput(t, d, hal.Int32)
	require.NoError(t, d.Reduce(hal.Sum, out, src, 1))
	assert.Equal(t, sum, nnGet(t, d, out)[0])
}

// matmulRef is a·b in float64 over row-major batches.
func matmulRef(a, b []float64, batch, m, k, n int) []float64 {
	out := make([]float64, batch*m*n)
	for p := range batch {
		for i := range m {
			for j := range n {
				s := 0.0
				for q := range k {
					s += a[p*m*k+i*k+q] * b[p*k*n+q*n+j]
				}
				out[p*m*n+i*n+j] = s
			}
		}
	}
	return out
}

func TestChunkMatMul(t *testing.T) { forEachChunkPair(t, testChunkMatMul) }

func testChunkMatMul(t *testing.T, p chunkPair) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name           string
		batch, m, k, n int
		transposedA    bool
	}{
		{"rows", 1, 301, 64, 67, false},    // a and dst over 1 window
		{"batched", 5, 70, 40, 50, false},  // batches per window
		{"long-k", 1, 8, 20001, 3, false},  // b spans 4 windows: K slabs
		{"long-k-at", 3, 9, 9001, 5, true}, // K slabs of a transposed a
		{"vector", 1, 1, 40000, 1, false},  // a dot product in slabs
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := nnRandoms(r, tc.batch*tc.m*tc.k), nnRandoms(r, tc.batch*tc.k*tc.n), nnRandoms(r, tc.batch*tc.m*tc.n)
			want := matmulRef(a, b, tc.batch, tc.m, tc.k, tc.n)
			small, big := p.run(func(d *Device) []float64 {
				av := nnContig(t, d, hal.Float32, a, tc.batch, tc.m, tc.k)
				bv := nnContig(t, d, hal.Float32, b, tc.batch, tc.k, tc.n)
				if tc.transposedA {
					// a stored as [batch, k, m].
					av = nnPut(t, d, hal.Float32, a, []int{tc.batch, tc.m, tc.k}, []int{tc.m * tc.k, 1, tc.m}, 0)
				}
				out := nnContig(t, d, hal.Float32, c, tc.batch, tc.m, tc.n)
				require.NoError(t, d.MatMul(out, av, bv, 0.5, 2))
				return nnGet(t, d, out)
			})
			for i := range want {
				w := 0.5*want[i] + 2*float64(float32(c[i]))
				tol := 1e-5 * math.Sqrt(float64(tc.k)) * 4
				require.InDelta(t, w, small[i], tol+1e-5*math.Abs(w), "element %d", i)
				require.InDelta(t, big[i], small[i], 2*tol+1e-5*math.Abs(w), "element %d", i)
			}
		})
	}
}

// TestChunkTooLarge checks the cases that cannot split: a MatMul row wider
// than a window, and a kernel without windows.
func TestChunkTooLarge(t *testing.T) { forEachChunkPair(t, testChunkTooLarge) }

func testChunkTooLarge(t *testing.T, p chunkPair) {
	d := p.small
	const n = 20000 // 80,000 bytes per row
	a := nnOutput(t, d, hal.Float32, 2, 1)
	b := nnOutput(t, d, hal.Float32, 1, n)
	out := nnOutput(t, d, hal.Float32, 2, n)
	err := d.MatMul(out, a, b, 1, 0)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrTooLarge), "%v", err)
	for _, s := range []string{hal.KernelMatMul, "float32[2 20000]", "float32[1 20000]", d.info.Name, "wider than a window"} {
		assert.Contains(t, err.Error(), s)
	}

	src := nnOutput(t, d, hal.Float32, 3, n)
	dst := nnOutput(t, d, hal.Float32, 3, n)
	err = d.Softmax(dst, src, false)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrTooLarge), "%v", err)
	assert.Contains(t, err.Error(), "float32[3 20000]")
	assert.Contains(t, err.Error(), d.info.Name)
}

// TestChunkPlan checks the planner's pieces on their own: every index in
// exactly one piece, in order, and every window within the limit.
func TestChunkPlan(t *testing.T) { forEachChunkPair(t, testChunkPlan) }

func testChunkPlan(t *testing.T, p chunkPair) {
	d := p.small
	buf, err := d.Alloc(1 << 20)
	require.NoError(t, err)
	defer d.Free(buf)
	root := buf.(*device.Buffer).Allocation()
	for _, tc := range []struct {
		shape   []int
		strides [][]int
	}{
		{[]int{100000}, [][]int{{1}, {0}}},
		{[]int{300, 700}, [][]int{{700, 1}, {1, 300}}},
		{[]int{7, 9, 4001}, [][]int{{9 * 4001, 4001, 1}, {0, 1, 0}}},
	} {
		var views []chunkView
		for _, s := range tc.strides {
			views = append(views, chunkView{alloc: root, strides: s, esize: 4})
		}
		c := d.newChunker(tc.shape, views)
		require.NoError(t, c.plan())
		next := int64(0)
		for _, p := range c.out {
			require.Equal(t, next, p.base, "%v: pieces in order, without gaps", tc.shape)
			next += int64(hal.View{Shape: p.shape(tc.shape)}.Elements())
			ws, ok := c.windows(p.axis, p.count, p.offsets)
			require.True(t, ok)
			require.Len(t, c.bind(p), len(views))
			for _, w := range ws {
				require.LessOrEqual(t, w.size, int64(chunkWindow))
				require.Zero(t, w.base%c.align)
			}
		}
		require.Equal(t, int64(hal.View{Shape: tc.shape}.Elements()), next)
		t.Logf("%v: %d pieces", tc.shape, len(c.out))
	}
}

func TestChunkLimitEnv(t *testing.T) { forEachTestAdapter(t, testChunkLimitEnv) }

func testChunkLimitEnv(t *testing.T, a adapters.Adapter) {
	t.Setenv(MaxBindingEnv, "1048576")
	t.Setenv(MaxBufferEnv, "")
	h, err := Open(a.Index)
	require.NoError(t, err)
	d := h.(*Device)
	assert.Equal(t, uint64(1<<20), d.limits.MaxStorageBufferBindingSize)
	assert.Equal(t, uint64(1<<20), d.Info().Limits.MaxStorageBufferBindingSize)
	require.NoError(t, h.Close())

	t.Setenv(MaxBufferEnv, "2097152")
	h, err = Open(a.Index)
	require.NoError(t, err)
	_, err = h.Alloc(3 << 20)
	assert.True(t, errors.Is(err, hal.ErrTooLarge), "%v", err)
	require.NoError(t, h.Close())

	for _, bad := range []string{"12", "lots", "-5"} {
		t.Setenv(MaxBindingEnv, bad)
		_, err = Open(a.Index)
		assert.True(t, errors.Is(err, hal.ErrInvalid), "%q: %v", bad, err)
		assert.Contains(t, err.Error(), MaxBindingEnv)
	}
}
