package cpu_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/cpu"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// open opens the registered CPU backend the way applications do.
func open(tb testing.TB) hal.Device {
	tb.Helper()
	backend, ok := hal.Lookup("cpu")
	require.True(tb, ok, "cpu backend not registered")
	dev, err := backend.Open(0)
	require.NoError(tb, err)
	tb.Cleanup(func() { assert.NoError(tb, dev.Close()) })
	return dev
}

func TestConformance(t *testing.T) {
	haltest.Run(t, open(t))
}

func BenchmarkKernels(b *testing.B) {
	haltest.Benchmark(b, open(b))
}

func TestAdapters(t *testing.T) {
	backend, ok := hal.Lookup("cpu")
	require.True(t, ok)
	infos, err := backend.Adapters()
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, hal.AdapterCPU, infos[0].Type)
	assert.Equal(t, "cpu", infos[0].Backend)
	assert.Equal(t, uint64(1<<62), infos[0].Limits.MaxBufferSize)
	assert.Equal(t, infos[0], cpu.New().Info())
}

func TestOpenBadIndex(t *testing.T) {
	backend, _ := hal.Lookup("cpu")
	for _, index := range []int{-1, 1, 100} {
		dev, err := backend.Open(index)
		assert.ErrorIs(t, err, hal.ErrNoAdapter, "index %d", index)
		assert.Nil(t, dev)
	}
}

// TestConcurrentUse drives one device from 64 goroutines, each with its own
// buffers, with kernels large enough to fan out internally; run with -race.
func TestConcurrentUse(t *testing.T) {
	const (
		goroutines = 64
		n          = 1 << 16
	)
	dev := open(t)
	start := dev.Stats()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(g - i%7)
			}
			for round := range 5 {
				a, err := dev.Alloc(n * 4)
				if !assert.NoError(t, err) {
					return
				}
				b, err := dev.Alloc(4 * 4)
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, dev.Write(a, cpu.BytesOf(x)))
				assert.NoError(t, dev.Binary(hal.Add, a, a, a, n))
				assert.NoError(t, dev.Unary(hal.ReLU, a, a, n))
				assert.NoError(t, dev.MatMul(b, a, a, 2, 2, 2))
				got := make([]byte, n*4)
				assert.NoError(t, dev.Read(a, got))
				want := make([]float32, n)
				for i := range x {
					want[i] = max(2*x[i], 0)
				}
				assert.Equal(t, cpu.BytesOf(want), got, "goroutine %d round %d", g, round)
				dev.Free(a)
				dev.Free(b)
			}
		})
	}
	wg.Wait()
	end := dev.Stats()
	assert.Equal(t, start.LiveBytes, end.LiveBytes)
	assert.Equal(t, int64(goroutines*5*2), end.Allocs-start.Allocs)
	assert.Equal(t, int64(goroutines*5), end.HostReads-start.HostReads)
	assert.Equal(t, int64(goroutines*5*3), end.Dispatches-start.Dispatches)
}

func TestUseAfterClose(t *testing.T) {
	dev := cpu.New()
	b, err := dev.Alloc(64)
	require.NoError(t, err)
	require.NoError(t, dev.Close())
	assert.Zero(t, dev.Stats().LiveBytes, "Close frees every buffer")

	closed := func(what string, err error) {
		assert.ErrorIs(t, err, hal.ErrClosed, what)
	}
	_, err = dev.Alloc(64)
	closed("Alloc", err)
	closed("Write", dev.Write(b, make([]byte, 4)))
	closed("Read", dev.Read(b, make([]byte, 4)))
	closed("Binary", dev.Binary(hal.Add, b, b, b, 1))
	closed("Unary", dev.Unary(hal.Sigmoid, b, b, 1))
	closed("MatMul", dev.MatMul(b, b, b, 0, 0, 0))
	closed("Sync", dev.Sync())
	dev.Free(b) // no-op, no panic
	assert.NoError(t, dev.Close(), "closing twice is a no-op")
}

// TestMatMulAliasing pins down the CPU's answer to dst aliasing an input,
// which the hal contract leaves to the backend.
func TestMatMulAliasing(t *testing.T) {
	dev := open(t)
	b, err := dev.Alloc(64)
	require.NoError(t, err)
	assert.ErrorIs(t, dev.MatMul(b, b, b, 2, 2, 2), hal.ErrInvalid)
}

func TestAllocRounding(t *testing.T) {
	dev := open(t)
	for _, size := range []int64{0, 1, 4, 5, 13} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			before := dev.Stats().LiveBytes
			b, err := dev.Alloc(size)
			require.NoError(t, err)
			assert.Equal(t, size, b.Size())
			assert.Equal(t, (size+3)/4*4, dev.Stats().LiveBytes-before, "rounded to whole float32s")
			dev.Free(b)
		})
	}
	_, err := dev.Alloc(1<<62 + 1)
	assert.ErrorIs(t, err, hal.ErrInvalid)
}
