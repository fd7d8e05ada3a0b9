package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// BenchmarkConv2DCNNStep times, one by one, the five convolutions of
// cmd/demo's CNN training step (batch 64 of 28×28, conv 1→16 and 16→32,
// 3×3, padding 1) as the graph runs them: both forwards, the second
// layer's input gradient (a convolution over the flipped weight), and
// both weight gradients (the input correlated with the output gradient,
// batch and channels exchanged, output the 3×3 kernel).
//
//	go test ./backend/cpu -run '^$' -bench Conv2DCNNStep
func BenchmarkConv2DCNNStep(b *testing.B) {
	h := newHarness(b)
	rng := rand.New(rand.NewPCG(25, 26))
	same := func(hw int) hal.Window {
		return hal.Window{KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1, OutH: hw, OutW: hw}
	}
	kernel := func(hw int) hal.Window {
		return hal.Window{KH: hw, KW: hw, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1, OutH: 3, OutW: 3}
	}
	cnhw := []int{1, 0, 2, 3}
	const n = 64
	type conv struct {
		name         string
		src, wt, dst hal.View
		win          hal.Window
	}
	x1 := h.view(hal.Float32, randn(rng, n*28*28), n, 1, 28, 28)
	x2 := h.view(hal.Float32, randn(rng, n*16*14*14), n, 16, 14, 14)
	convs := []conv{
		{"forward1", x1, h.view(hal.Float32, randn(rng, 16*9), 16, 1, 3, 3), h.zeros(hal.Float32, n, 16, 28, 28), same(28)},
		{"weightgrad1", hal.View{Buf: x1.Buf, DType: hal.Float32, Shape: []int{1, n, 28, 28}, Strides: hal.RowMajorStrides([]int{1, n, 28, 28})},
			h.strided(hal.Float32, randn(rng, n*16*28*28), []int{16, n, 28, 28}, cnhw, 1, 0), h.zeros(hal.Float32, 1, 16, 3, 3), kernel(28)},
		{"forward2", x2, h.view(hal.Float32, randn(rng, 32*16*9), 32, 16, 3, 3), h.zeros(hal.Float32, n, 32, 14, 14), same(14)},
		{"inputgrad2", h.view(hal.Float32, randn(rng, n*32*14*14), n, 32, 14, 14), h.view(hal.Float32, randn(rng, 16*32*9), 16, 32, 3, 3),
			h.zeros(hal.Float32, n, 16, 14, 14), same(14)},
		{"weightgrad2", h.strided(hal.Float32, randn(rng, n*16*14*14), []int{16, n, 14, 14}, cnhw, 1, 0),
			h.strided(hal.Float32, randn(rng, n*32*14*14), []int{32, n, 14, 14}, cnhw, 1, 0), h.zeros(hal.Float32, 16, 32, 3, 3), kernel(14)},
	}
	for _, c := range convs {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := h.dev.Conv2D(c.dst, c.src, c.wt, c.win, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
