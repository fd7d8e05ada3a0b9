package haltest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// RunClosed checks a device after Close: it closes dev (which the caller
// must not use again), then expects every method to fail with
// hal.ErrClosed, Free to do nothing, Close again to be a no-op, and Stats
// to show nothing live. Call it with a fresh device, not the one given to
// Run.
func RunClosed(t *testing.T, dev hal.Device) {
	f32 := hal.Float32
	b, err := dev.Alloc(64)
	require.NoError(t, err)
	other, err := dev.Alloc(64)
	require.NoError(t, err)
	v := hal.Contiguous(b, f32, 4)
	w := hal.Contiguous(other, f32, 4)
	m := hal.Contiguous(other, f32, 2, 2)
	i32 := hal.Contiguous(other, hal.Int32, 4)
	img := hal.Contiguous(b, f32, 1, 1, 3, 3)
	cols := hal.Contiguous(other, f32, 1, 4, 4)
	out := hal.Contiguous(other, f32, 1, 1, 2, 2)
	require.NoError(t, dev.Close())
	assert.Zero(t, dev.Stats().LiveBytes, "Close frees every buffer")

	calls := map[string]func() error{
		"Alloc":      func() error { _, err := dev.Alloc(64); return err },
		"Write":      func() error { return dev.Write(b, make([]byte, 4)) },
		"Read":       func() error { return dev.Read(b, make([]byte, 4)) },
		"Fill":       func() error { return dev.Fill(v, 0, 0) },
		"Random":     func() error { return dev.Random(v, hal.Uniform, 0, 0, 0) },
		"Copy":       func() error { return dev.Copy(w, v) },
		"Unary":      func() error { return dev.Unary(hal.Exp, w, v, hal.Args{}) },
		"Binary":     func() error { return dev.Binary(hal.Add, w, v, v) },
		"Where":      func() error { return dev.Where(w, i32, v, v) },
		"Reduce":     func() error { return dev.Reduce(hal.Sum, hal.Contiguous(other, f32), v, 1) },
		"MatMul":     func() error { return dev.MatMul(m, hal.Contiguous(b, f32, 2, 2), hal.Contiguous(b, f32, 2, 2), 1, 0) },
		"Gather":     func() error { return dev.Gather(w, v, i32, 0) },
		"ScatterAdd": func() error { return dev.ScatterAdd(v, i32, w, 0) },
		"Im2Col":     func() error { return dev.Im2Col(cols, img, probeWindow) },
		"Col2Im":     func() error { return dev.Col2Im(img, cols, probeWindow) },
		"Pool2D":     func() error { return dev.Pool2D(hal.PoolAvg, out, hal.View{}, img, probeWindow, false) },
		"GridSample": func() error {
			return dev.GridSample(out, img, hal.Contiguous(other, f32, 1, 2, 2, 2), hal.GridZeros, false)
		},
		"Sync": dev.Sync,
	}
	for name, call := range calls {
		assert.ErrorIs(t, call(), hal.ErrClosed, name)
	}
	dev.Free(b) // a no-op, not a panic
	assert.NoError(t, dev.Close(), "closing twice is a no-op")
}
