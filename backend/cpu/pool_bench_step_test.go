package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// BenchmarkPool2DCNNStep times max pooling 2×2 as cmd/demo's CNN step runs
// it, on ReLU outputs (half of them zero, so ties are common).
//
//	go test ./backend/cpu -run '^$' -bench Pool2DCNNStep
func BenchmarkPool2DCNNStep(b *testing.B) {
	h := newHarness(b)
	rng := rand.New(rand.NewPCG(27, 28))
	for _, s := range []struct{ c, hw int }{{16, 28}, {32, 14}} {
		const n = 64
		xv := randn(rng, n*s.c*s.hw*s.hw)
		for i := range xv {
			xv[i] = max(xv[i], 0)
		}
		x := h.view(hal.Float32, xv, n, s.c, s.hw, s.hw)
		win := hal.Window{KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilationH: 1, DilationW: 1, OutH: s.hw / 2, OutW: s.hw / 2}
		dst := h.zeros(hal.Float32, n, s.c, s.hw/2, s.hw/2)
		idx := h.zeros(hal.Int32, n, s.c, s.hw/2, s.hw/2)
		b.Run(fmt.Sprintf("c%d-%dx%d", s.c, s.hw, s.hw), func(b *testing.B) {
			for b.Loop() {
				if err := h.dev.Pool2D(hal.PoolMax, dst, idx, x, win, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
