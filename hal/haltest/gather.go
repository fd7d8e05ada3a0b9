package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// gatherCase is a Gather or ScatterAdd geometry: the index's shape (dst's
// for Gather, src's for ScatterAdd), the size of the indexed operand along
// axis, and the layouts of the indexed operand and of the index. An index
// layout with a broadcast axis is index_select (one index per row, repeated
// with stride 0) or an embedding lookup.
type gatherCase struct {
	name     string
	shape    []int
	axis     int
	axisSize int
	lData    layout
	lIndex   layout
}

// indexRowBroadcast is the index layout of index_select along axis 0 of a
// 2-D operand: one index per row, stride 0 along the columns.
var indexRowBroadcast = layout{name: "index-select", bcast: []bool{false, true}}

func gatherCases() []gatherCase {
	c := contiguous
	cases := []gatherCase{
		{"n=0", []int{0}, 0, 5, c, c},
		{"n=1", []int{1}, 0, 1, c, c},
		{"n=7", []int{7}, 0, 10, c, c},
		{"n=1025", []int{1025}, 0, 1000, withOffset(3), withOffset(1)},
		{"4x6/axis1", []int{4, 6}, 1, 9, c, c},
		{"6x5/axis0", []int{6, 5}, 0, 3, c, c},
		{"10x6/index-select", []int{10, 6}, 0, 4, withOffset(2), indexRowBroadcast},
		{"12x8/embedding", []int{12, 8}, 0, 50, c, indexRowBroadcast},
		{"2x1x3x1x2x2x1x3/rank8", []int{2, 1, 3, 1, 2, 2, 1, 3}, 4, 5, inputLayouts(8)[3], c},
	}
	for i, l := range inputLayouts(3) {
		ls := inputLayouts(3)
		cases = append(cases, gatherCase{fmt.Sprintf("3x4x5/axis%d/%s", i%3, l.name), []int{3, 4, 5}, i % 3, 2 + i, l, ls[(i+2)%len(ls)]})
	}
	return cases
}

// withAxis returns shape with axis set to size.
func withAxis(shape []int, axis, size int) []int {
	out := append([]int{}, shape...)
	out[axis] = size
	return out
}

// indexGen draws valid indices into an axis of size n.
func indexGen(n int) gen {
	return func(rng *rand.Rand, _ hal.DType) float64 { return float64(rng.IntN(n)) }
}

// refGather is torch.gather: out[i] = src[i with axis coordinate idx[i]],
// 0 where the index is out of range.
func refGather(src []float64, srcShape []int, idx []float64, shape []int, axis int) []float64 {
	out := make([]float64, len(idx))
	strides := hal.RowMajorStrides(srcShape)
	for i := range out {
		c := unravel(i, shape)
		j := int(idx[i])
		if j < 0 || j >= srcShape[axis] {
			continue
		}
		c[axis] = j
		pos := 0
		for ax, ci := range c {
			pos += ci * strides[ax]
		}
		out[i] = src[pos]
	}
	return out
}

// refScatterAdd is torch.Tensor.scatter_add_ on a copy of dst, skipping
// out-of-range indices, with each element's allowed error: the sum bound
// over the terms that land on it.
func refScatterAdd(dt hal.DType, dst []float64, dstShape []int, idx, src []float64, shape []int, axis int) (want, tol []float64) {
	want = append([]float64{}, dst...)
	mag := make([]float64, len(dst))
	count := make([]int, len(dst))
	strides := hal.RowMajorStrides(dstShape)
	for i := range src {
		c := unravel(i, shape)
		j := int(idx[i])
		if j < 0 || j >= dstShape[axis] {
			continue
		}
		c[axis] = j
		pos := 0
		for ax, ci := range c {
			pos += ci * strides[ax]
		}
		want[pos] += src[i]
		mag[pos] += math.Abs(src[i])
		count[pos]++
	}
	u := unitRoundoff(dt)
	tol = make([]float64, len(dst))
	for i := range tol {
		tol[i] = u * perTerm * float64(count[i]+1) * (mag[i] + math.Abs(dst[i]))
	}
	return want, tol
}

// indexType is the index dtype of the i-th case: Int32 and, on a device
// that holds Int64 (whose Gather and ScatterAdd then take Int64 indices
// too), every other case Int64.
func (s *suite) indexType(i int) hal.DType {
	if i%2 == 1 && s.has(hal.KernelCopy, hal.Int64) {
		return hal.Int64
	}
	return hal.Int32
}

func testGather(t *testing.T, s *suite, dt hal.DType) {
	for i, c := range gatherCases() {
		it := s.indexType(i)
		t.Run(c.name+"/index="+it.String(), func(t *testing.T) {
			rng := newRand(t.Name())
			srcShape := withAxis(c.shape, c.axis, c.axisSize)
			src := s.operand(t, dt, srcShape, c.lData, bind(wide, rng, dt))
			index := s.operand(t, it, c.shape, c.lIndex, bind(indexGen(c.axisSize), rng, it))
			dst := s.output(t, dt, c.shape, withOffset(1))
			require.NoError(t, s.dev.Gather(dst.View, src.View, index.View, c.axis))
			want := refGather(src.values(), srcShape, index.values(), c.shape, c.axis)
			checkExact(t, dt, s.result(t, dst), want, nil)
		})
	}
	t.Run("out-of-range", func(t *testing.T) {
		// Indices −1, n and a far one: those elements read as 0, the
		// rest are gathered, and the error surfaces once.
		rng := newRand(t.Name())
		shape, srcShape := []int{5, 8}, []int{5, 10}
		src := s.operand(t, dt, srcShape, contiguous, bind(wide, rng, dt))
		idx := randomValues(40, indexGen(10), rng, hal.Int32)
		idx[3], idx[17], idx[38] = -1, 10, 1234
		index := s.fromValues(t, hal.Int32, shape, contiguous, idx, rng)
		dst := s.output(t, dt, shape, contiguous)
		err := s.dev.Gather(dst.View, src.View, index.View, 1)
		checkIndexError(t, s, "gather", err)
		want := refGather(src.values(), srcShape, idx, shape, 1)
		checkExact(t, dt, s.result(t, dst), want, nil)
	})
	t.Run("out-of-range/message", func(t *testing.T) {
		rng := newRand(t.Name())
		src := s.operand(t, dt, []int{10}, contiguous, bind(wide, rng, dt))
		index := s.fromValues(t, hal.Int32, []int{3}, contiguous, []float64{1, 1234, 2}, rng)
		dst := s.output(t, dt, []int{3}, contiguous)
		err := checkIndexError(t, s, "gather", s.dev.Gather(dst.View, src.View, index.View, 0))
		if err != nil {
			assert.Contains(t, err.Error(), "1234", "the message names the bad index")
			assert.Contains(t, err.Error(), "10", "the message names the axis size")
		}
	})
}

// checkIndexError asserts that a gather or scatter with a bad index fails
// with hal.ErrIndexOutOfRange exactly once, from the call or from the next
// Sync, names the op, and leaves the device clean: the Sync after reports
// nothing. It returns the error.
func checkIndexError(t *testing.T, s *suite, op string, callErr error) error {
	t.Helper()
	syncErr := s.dev.Sync()
	err := callErr
	if err == nil {
		err = syncErr
	} else {
		assert.NoError(t, syncErr, "the error came from the call; Sync must not report it again")
	}
	if !assert.ErrorIs(t, err, hal.ErrIndexOutOfRange, "from the call or the next Sync") {
		return nil
	}
	assert.Contains(t, normalize(err.Error()), normalize(op), "the message names the op")
	// Every backend words it alike: a *hal.IndexError naming the kernel.
	var ie *hal.IndexError
	if assert.ErrorAs(t, err, &ie, "the error is a *hal.IndexError") {
		assert.Equal(t, op, ie.Op)
	}
	assert.NoError(t, s.dev.Sync(), "the error is reported once")
	return err
}

// normalize lowercases and drops separators, so "ScatterAdd",
// "scatter_add" and "scatter-add" all match.
func normalize(s string) string {
	return strings.NewReplacer("_", "", "-", "", ".", "", " ", "").Replace(strings.ToLower(s))
}

func testScatterAdd(t *testing.T, s *suite, dt hal.DType) {
	for i, c := range gatherCases() {
		it := s.indexType(i)
		t.Run(c.name+"/index="+it.String(), func(t *testing.T) {
			rng := newRand(t.Name())
			dstShape := withAxis(c.shape, c.axis, c.axisSize)
			index := s.operand(t, it, c.shape, c.lIndex, bind(indexGen(c.axisSize), rng, it))
			src := s.operand(t, dt, c.shape, c.lData, bind(wide, rng, dt))
			dst := s.operand(t, dt, dstShape, withOffset(2), bind(wide, rng, dt))
			d0 := dst.values()
			require.NoError(t, s.dev.ScatterAdd(dst.View, index.View, src.View, c.axis))
			want, tol := refScatterAdd(dt, d0, dstShape, index.values(), src.values(), c.shape, c.axis)
			if dt.IsInteger() {
				checkExact(t, dt, s.result(t, dst), want, nil)
			} else {
				checkWithin(t, s.arith, dt, s.result(t, dst), want, tol, nil)
			}
		})
	}
	t.Run("collisions", func(t *testing.T) {
		// 3000 additions onto 3 elements: a scatter that is not atomic
		// (or serialized) loses some of them.
		rng := newRand(t.Name())
		index := s.operand(t, hal.Int32, []int{3000}, contiguous, bind(indexGen(3), rng, hal.Int32))
		src := s.operand(t, dt, []int{3000}, contiguous, bind(intsIn(-3, 3), rng, dt))
		dst := s.operand(t, dt, []int{3}, contiguous, bind(intsIn(-3, 3), rng, dt))
		d0 := dst.values()
		require.NoError(t, s.dev.ScatterAdd(dst.View, index.View, src.View, 0))
		// Integer terms: every partial sum is exact in every dtype.
		want, _ := refScatterAdd(dt, d0, []int{3}, index.values(), src.values(), []int{3000}, 0)
		checkExact(t, dt, s.result(t, dst), want, nil)
	})
	t.Run("out-of-range", func(t *testing.T) {
		rng := newRand(t.Name())
		shape, dstShape := []int{5, 8}, []int{5, 10}
		idx := randomValues(40, indexGen(10), rng, hal.Int32)
		idx[3], idx[17], idx[38] = -1, 10, 1234
		index := s.fromValues(t, hal.Int32, shape, contiguous, idx, rng)
		src := s.operand(t, dt, shape, contiguous, bind(intsIn(-3, 3), rng, dt))
		dst := s.operand(t, dt, dstShape, contiguous, bind(intsIn(-3, 3), rng, dt))
		d0 := dst.values()
		err := s.dev.ScatterAdd(dst.View, index.View, src.View, 1)
		checkIndexError(t, s, "scatter_add", err)
		want, _ := refScatterAdd(dt, d0, dstShape, idx, src.values(), shape, 1)
		checkExact(t, dt, s.result(t, dst), want, nil)
	})
}
