package haltest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// testOrdering checks that calls take effect in the order they are made,
// however a backend queues them: a kernel sees the writes made before it
// and none made after it, even when the buffer it read is freed and handed
// out again at once. An asynchronous backend that batches kernels but
// copies host data straight away breaks exactly these.
func testOrdering(t *testing.T, s *suite) {
	dt := hal.Float32
	if !s.has(hal.Neg.Kernel(), dt) {
		t.Skip("neg is not declared for float32")
	}
	const n = 1025
	neg := func(x []float64) []float64 { return refUnary(hal.Neg, x, hal.Args{}) }
	t.Run("write-after-kernel", func(t *testing.T) {
		rng := newRand(t.Name())
		src := s.operand(t, dt, []int{n}, contiguous, bind(wide, rng, dt))
		dst := s.output(t, dt, []int{n}, contiguous)
		x := src.values()
		require.NoError(t, s.dev.Unary(hal.Neg, dst.View, src.View, hal.Args{}))
		require.NoError(t, s.dev.Write(src.Buf, encode(dt, randomValues(len(src.store), wide, rng, dt))))
		checkExact(t, dt, s.result(t, dst), neg(x), nil)
	})
	t.Run("free-after-kernel", func(t *testing.T) {
		rng := newRand(t.Name())
		x := randomValues(n, wide, rng, dt)
		buf, err := s.dev.Alloc(n * 4)
		require.NoError(t, err)
		require.NoError(t, s.dev.Write(buf, encode(dt, x)))
		dst := s.output(t, dt, []int{n}, contiguous)
		require.NoError(t, s.dev.Unary(hal.Neg, dst.View, hal.Contiguous(buf, dt, n), hal.Args{}))
		s.dev.Free(buf)
		// The same size again: a pool hands back the buffer just freed.
		again := alloc(t, s.dev, n*4)
		require.NoError(t, s.dev.Write(again, encode(dt, randomValues(n, wide, rng, dt))))
		checkExact(t, dt, s.result(t, dst), neg(x), nil)
	})
	t.Run("flush", func(t *testing.T) {
		// A backend that submits work early (hal.Flusher) keeps the order
		// too: Flush with nothing pending is harmless, and a write after
		// a flushed kernel does not reach the kernel, nor does freeing the
		// kernel's input.
		f, ok := s.dev.(hal.Flusher)
		if !ok {
			t.Skip("the device does not implement hal.Flusher")
		}
		require.NoError(t, f.Flush())
		rng := newRand(t.Name())
		src := s.operand(t, dt, []int{n}, contiguous, bind(wide, rng, dt))
		x := src.values()
		buf, err := s.dev.Alloc(n * 4)
		require.NoError(t, err)
		y := randomValues(n, wide, rng, dt)
		require.NoError(t, s.dev.Write(buf, encode(dt, y)))
		d1, d2 := s.output(t, dt, []int{n}, contiguous), s.output(t, dt, []int{n}, contiguous)
		require.NoError(t, s.dev.Unary(hal.Neg, d1.View, src.View, hal.Args{}))
		require.NoError(t, s.dev.Unary(hal.Neg, d2.View, hal.Contiguous(buf, dt, n), hal.Args{}))
		require.NoError(t, f.Flush())
		s.dev.Free(buf)
		again := alloc(t, s.dev, n*4)
		require.NoError(t, s.dev.Write(again, encode(dt, randomValues(n, wide, rng, dt))))
		require.NoError(t, s.dev.Write(src.Buf, encode(dt, randomValues(len(src.store), wide, rng, dt))))
		checkExact(t, dt, s.result(t, d1), neg(x), nil)
		checkExact(t, dt, s.result(t, d2), neg(y), nil)
	})
	t.Run("write-kernel-write-kernel", func(t *testing.T) {
		rng := newRand(t.Name())
		src := alloc(t, s.dev, n*4)
		d1, d2 := s.output(t, dt, []int{n}, contiguous), s.output(t, dt, []int{n}, contiguous)
		x1, x2 := randomValues(n, wide, rng, dt), randomValues(n, wide, rng, dt)
		require.NoError(t, s.dev.Write(src, encode(dt, x1)))
		require.NoError(t, s.dev.Unary(hal.Neg, d1.View, hal.Contiguous(src, dt, n), hal.Args{}))
		require.NoError(t, s.dev.Write(src, encode(dt, x2)))
		require.NoError(t, s.dev.Unary(hal.Neg, d2.View, hal.Contiguous(src, dt, n), hal.Args{}))
		checkExact(t, dt, s.result(t, d2), neg(x2), nil)
		checkExact(t, dt, s.result(t, d1), neg(x1), nil)
	})
}

// testConcurrent drives the device from several goroutines at once, each
// with its own buffers: the contract lets any goroutine call any method.
// Run the backend's tests with -race to make the most of it.
func testConcurrent(t *testing.T, s *suite) {
	dt := hal.Float32
	if !s.has(hal.Add.Kernel(), dt) || !s.has(hal.Sum.Kernel(), dt) {
		t.Skip("add and sum are not declared for float32")
	}
	const (
		goroutines = 8
		rounds     = 10
		n          = 4099
	)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := newRand(fmt.Sprint(t.Name(), g))
			for r := range rounds {
				x := randomValues(n, intsIn(-100, 100), rng, dt)
				a, err := s.dev.Alloc(n * 4)
				if !assert.NoError(t, err) {
					return
				}
				sum, err := s.dev.Alloc(4)
				if !assert.NoError(t, err) {
					return
				}
				va := hal.Contiguous(a, dt, n)
				assert.NoError(t, s.dev.Write(a, encode(dt, x)))
				assert.NoError(t, s.dev.Binary(hal.Add, va, va, va))
				assert.NoError(t, s.dev.Reduce(hal.Sum, hal.Contiguous(sum, dt), va, 1))
				raw := make([]byte, 4)
				assert.NoError(t, s.dev.Read(sum, raw))
				var want float64
				for _, v := range x {
					want += 2 * v // integers: exact in any order
				}
				assert.Equal(t, want, decode(dt, raw)[0], "goroutine %d round %d", g, r)
				s.dev.Free(a)
				s.dev.Free(sum)
			}
		})
	}
	wg.Wait()
	assert.NoError(t, s.dev.Sync())
}
