package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// unnormalize maps a grid coordinate in [−1, 1] to a pixel coordinate, as
// grid_sample: −1 and 1 are the centres of the corner pixels with
// alignCorners, else their outer edges.
func unnormalize(coord float64, size int, alignCorners bool) float64 {
	if alignCorners {
		return (coord + 1) / 2 * float64(size-1)
	}
	return ((coord+1)*float64(size) - 1) / 2
}

// refGridSample is bilinear torch.nn.functional.grid_sample of x [n, c, h,
// w] at grid [n, oh, ow, 2], with each element's allowed error (gridTol)
// on arithmetic ar: WGSL may round the coordinate's and weights' few
// operations to either neighbour, and divide by 2 to 2.5 ulp.
func refGridSample(ar Arithmetic, dt hal.DType, x []float64, n, c, h, w int, grid []float64, oh, ow int, padding hal.GridPadding, align bool) (want, tol []float64) {
	want, tol = make([]float64, n*c*oh*ow), make([]float64, n*c*oh*ow)
	u := unitRoundoff(dt)
	coordTol := gridCoord*ar.primRel(primRound, dt) + ar.extraRel(hal.KernelGridSample, dt)
	weightTol := gridRel * ar.primRel(primRound, dt)
	for b := range n {
		for i := range oh {
			for j := range ow {
				g := grid[((b*oh+i)*ow+j)*2:]
				ix, iy := unnormalize(g[0], w, align), unnormalize(g[1], h, align)
				if padding == hal.GridBorder {
					ix = math.Min(math.Max(ix, 0), float64(w-1))
					iy = math.Min(math.Max(iy, 0), float64(h-1))
				}
				x0, y0 := math.Floor(ix), math.Floor(iy)
				fx, fy := ix-x0, iy-y0
				corners := [4]struct {
					y, x int
					wt   float64
				}{
					{int(y0), int(x0), (1 - fy) * (1 - fx)},
					{int(y0), int(x0) + 1, (1 - fy) * fx},
					{int(y0) + 1, int(x0), fy * (1 - fx)},
					{int(y0) + 1, int(x0) + 1, fy * fx},
				}
				for ch := range c {
					var v, mag, wmag float64
					for _, k := range corners {
						if k.y < 0 || k.y >= h || k.x < 0 || k.x >= w {
							continue // zeros outside; border never gets here with weight ≠ 0
						}
						p := x[((b*c+ch)*h+k.y)*w+k.x]
						v += k.wt * p
						mag += math.Abs(p)
						wmag += math.Abs(k.wt * p)
					}
					o := ((b*c+ch)*oh+i)*ow + j
					want[o] = v
					tol[o] = u * (coordTol*float64(max(w, h))*mag + weightTol*wmag)
				}
			}
		}
	}
	return want, tol
}

// gridCoords draws grid coordinates: mostly inside [−1, 1], some outside
// (to exercise the padding), and some exactly on −1, 0, 1 and on pixel
// centres and edges, where floor's choice of corner flips.
func gridCoords(size int) gen {
	return func(rng *rand.Rand, _ hal.DType) float64 {
		switch rng.IntN(8) {
		case 0:
			return float64(rng.IntN(3) - 1)
		case 1:
			return 2*float64(rng.IntN(2*size+1))/float64(2*size) - 1 // pixel edges and centres
		case 2:
			return 1.5 * (2*rng.Float64() - 1)
		}
		return 2*rng.Float64() - 1
	}
}

func testGridSample(t *testing.T, s *suite, dt hal.DType) {
	type geom struct{ n, c, h, w, oh, ow int }
	geoms := []geom{{1, 1, 1, 1, 3, 2}, {2, 3, 5, 7, 4, 6}, {1, 2, 8, 3, 9, 5}, {1, 1, 4, 4, 1, 1}}
	for gi, g := range geoms {
		for _, padding := range []hal.GridPadding{hal.GridZeros, hal.GridBorder} {
			for _, align := range []bool{false, true} {
				name := fmt.Sprintf("%dx%dx%dx%d-to-%dx%d/%v/align=%v", g.n, g.c, g.h, g.w, g.oh, g.ow, padding, align)
				t.Run(name, func(t *testing.T) {
					rng := newRand(t.Name())
					ls := []layout{contiguous, nhwc, withOffset(1)}
					src := s.operand(t, dt, []int{g.n, g.c, g.h, g.w}, ls[gi%3], bind(wide, rng, dt))
					grid := s.operand(t, dt, []int{g.n, g.oh, g.ow, 2}, ls[(gi+2)%3], bind(gridCoords(max(g.h, g.w)), rng, dt))
					dst := s.output(t, dt, []int{g.n, g.c, g.oh, g.ow}, withOffset(gi%2))
					require.NoError(t, s.dev.GridSample(dst.View, src.View, grid.View, padding, align))
					gv := grid.values()
					want, tol := refGridSample(s.arith, dt, src.values(), g.n, g.c, g.h, g.w, gv, g.oh, g.ow, padding, align)
					per := g.c * g.oh * g.ow
					checkWithin(t, s.arith, dt, s.result(t, dst), want, tol, func(i int) string {
						b, pix := i/per, i%(g.oh*g.ow)
						return fmt.Sprintf("grid (%g, %g)", gv[(b*g.oh*g.ow+pix)*2], gv[(b*g.oh*g.ow+pix)*2+1])
					})
				})
			}
		}
	}
}
