package cpu

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

func TestAdapters(t *testing.T) {
	backend, ok := hal.Lookup("cpu")
	require.True(t, ok)
	infos, err := backend.Adapters()
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, hal.AdapterCPU, infos[0].Type)
	assert.Equal(t, "cpu", infos[0].Backend)
	assert.Equal(t, uint64(1<<62), infos[0].Limits.MaxBufferSize)
	assert.Equal(t, infos[0], New().Info())
}

func TestOpenBadIndex(t *testing.T) {
	backend, _ := hal.Lookup("cpu")
	for _, index := range []int{-1, 1, 100} {
		dev, err := backend.Open(index)
		assert.ErrorIs(t, err, hal.ErrNoAdapter, "index %d", index)
		assert.Nil(t, dev)
	}
}

// TestCapabilities pins down what the CPU declares, and that every kernel
// key hal knows is declared, for exactly the dtypes of its entry in hal's
// kernel table.
func TestCapabilities(t *testing.T) {
	caps := New().Capabilities()
	assert.Len(t, caps, len(hal.Kernels()))
	for _, k := range hal.KernelTable() {
		assert.Equal(t, k.DTypes, caps[k.Key], k.Key)
	}
	for _, k := range hal.Kernels() {
		assert.True(t, caps.Supports(k, hal.Float32), k)
		assert.True(t, caps.Supports(k, hal.Float64), k)
		if e, _ := hal.LookupKernel(k); e.Family != hal.FamilyLinalg { // as torch.linalg: no half
			assert.True(t, caps.Supports(k, hal.Float16), k)
		}
	}
	var ints []string
	for _, k := range hal.Kernels() {
		if caps.Supports(k, hal.Int32) {
			ints = append(ints, k)
		}
	}
	assert.Equal(t, []string{"fill", "copy", "unary.neg", "unary.abs", "unary.sign", "unary.square", "unary.relu", "unary.clamp",
		"binary.add", "binary.sub", "binary.mul", "binary.maximum", "binary.minimum", "binary.eq", "binary.ne", "binary.lt",
		"binary.le", "binary.gt", "binary.ge", "binary.relu_grad", "where", "reduce.sum", "reduce.prod", "reduce.max", "reduce.min",
		"reduce.argmax", "reduce.argmin", "gather", "scatter_add", "sort", "scan.cumsum", "scan.cumprod"}, ints)
}

// TestConcurrentUse drives one device from 32 goroutines, each with its own
// buffers, with kernels large enough to fan out internally; run with -race.
func TestConcurrentUse(t *testing.T) {
	const (
		goroutines = 32
		n          = 1 << 16
	)
	h := newHarness(t)
	dev := h.dev
	start := dev.Stats()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			x := make([]float64, n)
			want := make([]float64, n)
			for i := range x {
				x[i] = float64(g - i%7)
				want[i] = max(2*x[i], 0)
			}
			for range 3 {
				a, err := dev.Alloc(n * 4)
				if !assert.NoError(t, err) {
					return
				}
				m, err := dev.Alloc(4 * 4)
				if !assert.NoError(t, err) {
					return
				}
				v := hal.Contiguous(a, hal.Float32, n)
				assert.NoError(t, dev.Write(a, encode(hal.Float32, x)))
				assert.NoError(t, dev.Binary(hal.Add, v, v, v))
				assert.NoError(t, dev.Unary(hal.ReLU, v, v, hal.Args{}))
				sq := hal.Contiguous(a, hal.Float32, 2, 2)
				assert.NoError(t, dev.MatMul(hal.Contiguous(m, hal.Float32, 2, 2), sq, sq, 1, 0))
				got := make([]byte, n*4)
				assert.NoError(t, dev.Read(a, got))
				assert.Equal(t, want, decode(hal.Float32, got))
				dev.Free(a)
				dev.Free(m)
			}
		})
	}
	wg.Wait()
	end := dev.Stats()
	assert.Equal(t, start.LiveBytes, end.LiveBytes)
	assert.Equal(t, int64(goroutines*3*2), end.Allocs+end.Reuses-start.Allocs-start.Reuses)
	assert.Equal(t, int64(goroutines*3), end.HostReads-start.HostReads)
	assert.Equal(t, int64(goroutines*3*3), end.Dispatches-start.Dispatches)
}

func TestUseAfterClose(t *testing.T) {
	dev := New()
	b, err := dev.Alloc(64)
	require.NoError(t, err)
	v := hal.Contiguous(b, hal.Float32, 4)
	require.NoError(t, dev.Close())
	assert.Zero(t, dev.Stats().LiveBytes, "Close frees every buffer")

	closed := func(what string, err error) {
		assert.ErrorIs(t, err, hal.ErrClosed, what)
	}
	_, err = dev.Alloc(64)
	closed("Alloc", err)
	closed("Write", dev.Write(b, make([]byte, 4)))
	closed("Read", dev.Read(b, make([]byte, 4)))
	closed("Binary", dev.Binary(hal.Add, v, v, v))
	closed("Unary", dev.Unary(hal.Sigmoid, v, v, hal.Args{}))
	closed("Fill", dev.Fill(v, 0, 0))
	closed("Sync", dev.Sync())
	dev.Free(b) // no-op, no panic
	assert.NoError(t, dev.Close(), "closing twice is a no-op")
}

func TestUseAfterFree(t *testing.T) {
	h := newHarness(t)
	v := h.zeros(hal.Float32, 4)
	h.dev.Free(v.Buf)
	h.dev.Free(v.Buf) // twice is a no-op
	err := h.dev.Fill(v, 1, 0)
	assert.ErrorIs(t, err, hal.ErrClosed)
	assert.EqualError(t, err, "cpu: fill: dst: buffer was freed: device or buffer closed")
}

func TestAllocRounding(t *testing.T) {
	h := newHarness(t)
	dev := h.dev
	for _, size := range []int64{0, 1, 4, 8, 13} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			before := dev.Stats().LiveBytes
			b, err := dev.Alloc(size)
			require.NoError(t, err)
			assert.Equal(t, size, b.Size())
			assert.Equal(t, wordClass((size+7)/8)*8, dev.Stats().LiveBytes-before, "rounded to a whole size class of 8-byte words")
			dev.Free(b)
		})
	}
	_, err := dev.Alloc(1<<62 + 1)
	assert.ErrorIs(t, err, hal.ErrInvalid)
	b, err := dev.Alloc(6)
	require.NoError(t, err)
	assert.ErrorIs(t, dev.Write(b, make([]byte, 7)), hal.ErrInvalid, "past Size, though inside the rounded allocation")
}

// TestFloat64Alignment writes float64s at odd element offsets: the buffer
// words keep every float64 naturally aligned.
func TestFloat64Alignment(t *testing.T) {
	h := newHarness(t)
	v := h.view(hal.Float64, []float64{1, 2, 3, 4, 5}, 5)
	v = hal.View{Buf: v.Buf, DType: hal.Float64, Offset: 1, Shape: []int{3}, Strides: []int{1}}
	dst := h.zeros(hal.Float64, 3)
	require.NoError(t, h.dev.Unary(hal.Square, dst, v, hal.Args{}))
	assert.Equal(t, []float64{4, 9, 16}, h.read(dst))
}
