package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

func window(k, s, p, d, h, w int, ceil bool) hal.Window {
	return hal.Window{KH: k, KW: k, StrideH: s, StrideW: s, PadH: p, PadW: p, DilationH: d, DilationW: d,
		OutH: hal.OutputSize(h, k, s, p, d, ceil), OutW: hal.OutputSize(w, k, s, p, d, ceil)}
}

// TestIm2ColCol2Im checks Im2Col against its definition and Col2Im as its
// adjoint: ⟨im2col(x), y⟩ = ⟨x, col2im(y)⟩.
func TestIm2ColCol2Im(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const N, C, H, W = 2, 3, 7, 6
	for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
		for _, w := range []hal.Window{window(3, 1, 1, 1, H, W, false), window(2, 2, 0, 1, H, W, false), window(3, 2, 2, 2, H, W, false)} {
			t.Run(fmt.Sprintf("%v/%+v", dt, w), func(t *testing.T) {
				xv := randn(rng, N*C*H*W)
				for i := range xv {
					xv[i] = round(dt, xv[i])
				}
				x := h.strided(dt, xv, []int{N, C, H, W}, []int{0, 2, 3, 1}, 1, 2) // NHWC storage
				L := w.OutH * w.OutW
				cols := h.zeros(dt, N, C*w.KH*w.KW, L)
				require.NoError(t, h.dev.Im2Col(cols, x, w))
				got := h.read(cols)
				for n := range N {
					for c := range C {
						for kh := range w.KH {
							for kw := range w.KW {
								for oh := range w.OutH {
									for ow := range w.OutW {
										y := oh*w.StrideH - w.PadH + kh*w.DilationH
										z := ow*w.StrideW - w.PadW + kw*w.DilationW
										want := 0.0
										if y >= 0 && y < H && z >= 0 && z < W {
											want = xv[((n*C+c)*H+y)*W+z]
										}
										row := c*w.KH*w.KW + kh*w.KW + kw
										require.Equal(t, want, got[(n*C*w.KH*w.KW+row)*L+oh*w.OutW+ow])
									}
								}
							}
						}
					}
				}
				yv := randn(rng, len(got))
				for i := range yv {
					yv[i] = round(dt, yv[i])
				}
				y := h.strided(dt, yv, []int{N, C * w.KH * w.KW, L}, []int{2, 0, 1}, 1, 0)
				img := h.zeros(dt, N, C, H, W)
				require.NoError(t, h.dev.Col2Im(img, y, w))
				var lhs, rhs, mag float64
				for i := range got {
					lhs += got[i] * yv[i]
					mag += math.Abs(got[i] * yv[i])
				}
				for i, v := range h.read(img) {
					rhs += xv[i] * v
				}
				assert.InDelta(t, lhs, rhs, 8*eps(dt)*mag*float64(w.KH*w.KW))
			})
		}
	}
}

// poolRef follows PyTorch's CPU kernels (aten/src/ATen/native/cpu).
func poolRef(op hal.PoolOp, x []float64, N, C, H, W int, w hal.Window, countIncludePad bool) (out, idx []float64) {
	for nc := range N * C {
		plane := x[nc*H*W : (nc+1)*H*W]
		for oh := range w.OutH {
			for ow := range w.OutW {
				if op == hal.PoolAvg {
					hs, ws := oh*w.StrideH-w.PadH, ow*w.StrideW-w.PadW
					he, we := min(hs+w.KH, H+w.PadH), min(ws+w.KW, W+w.PadW)
					size := (he - hs) * (we - ws)
					hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, H), min(we, W)
					sum := 0.0
					for y := hs; y < he; y++ {
						for z := ws; z < we; z++ {
							sum += plane[y*W+z]
						}
					}
					if !countIncludePad {
						size = (he - hs) * (we - ws)
					}
					out = append(out, sum/float64(size))
					continue
				}
				h0, w0 := oh*w.StrideH-w.PadH, ow*w.StrideW-w.PadW
				h1, w1 := min(h0+(w.KH-1)*w.DilationH+1, H), min(w0+(w.KW-1)*w.DilationW+1, W)
				for h0 < 0 {
					h0 += w.DilationH
				}
				for w0 < 0 {
					w0 += w.DilationW
				}
				best, at := math.Inf(-1), h0*W+w0
				for y := h0; y < h1; y += w.DilationH {
					for z := w0; z < w1; z += w.DilationW {
						if v := plane[y*W+z]; v > best || (math.IsNaN(v) && !math.IsNaN(best)) {
							best, at = v, y*W+z
						}
					}
				}
				out = append(out, best)
				idx = append(idx, float64(at))
			}
		}
	}
	return out, idx
}

func TestPool2D(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(13, 14))
	const N, C, H, W = 2, 2, 7, 8
	for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
		for _, w := range []hal.Window{
			window(3, 2, 1, 1, H, W, false), window(3, 2, 1, 1, H, W, true), window(2, 3, 1, 1, H, W, true),
			window(3, 1, 0, 1, H, W, false), window(2, 2, 0, 1, H, W, false), window(3, 2, 1, 2, H, W, true),
		} {
			for _, op := range hal.PoolOps {
				for _, cip := range []bool{false, true} {
					if (op == hal.PoolMax && cip) || (op == hal.PoolAvg && w.DilationH > 1) {
						continue
					}
					t.Run(fmt.Sprintf("%v/%v/%+v/%v", op, dt, w, cip), func(t *testing.T) {
						xv := randn(rng, N*C*H*W)
						for i := range xv {
							xv[i] = round(dt, math.Round(xv[i]*2)) // ties
						}
						xv[5] = math.NaN()
						x := h.strided(dt, xv, []int{N, C, H, W}, []int{1, 0, 2, 3}, 1, 0)
						dst := h.zeros(dt, N, C, w.OutH, w.OutW)
						var idx hal.View
						if op == hal.PoolMax {
							idx = h.zeros(hal.Int32, N, C, w.OutH, w.OutW)
						}
						require.NoError(t, h.dev.Pool2D(op, dst, idx, x, w, cip))
						want, wantIdx := poolRef(op, xv, N, C, H, W, w, cip)
						for i := range want {
							want[i] = round(dt, want[i])
						}
						near(t, want, h.read(dst), 2*eps(dt), 0, "values")
						if op == hal.PoolMax {
							assert.Equal(t, wantIdx, h.read(idx))
						}
					})
				}
			}
		}
	}
}

// gridRef follows PyTorch's grid_sampler_2d (bilinear) reference.
func gridRef(x []float64, N, C, H, W int, g []float64, OH, OW int, border, align bool) []float64 {
	src := func(c float64, size int) float64 {
		if align {
			c = (c + 1) / 2 * float64(size-1)
		} else {
			c = ((c+1)*float64(size) - 1) / 2
		}
		if border {
			c = math.Min(float64(size-1), math.Max(c, 0))
		}
		return c
	}
	out := make([]float64, N*C*OH*OW)
	for n := range N {
		for oh := range OH {
			for ow := range OW {
				gp := ((n*OH+oh)*OW + ow) * 2
				ix, iy := src(g[gp], W), src(g[gp+1], H)
				xnw, ynw := math.Floor(ix), math.Floor(iy)
				xse, yse := xnw+1, ynw+1
				corners := []struct{ x, y, w float64 }{
					{xnw, ynw, (xse - ix) * (yse - iy)}, {xse, ynw, (ix - xnw) * (yse - iy)},
					{xnw, yse, (xse - ix) * (iy - ynw)}, {xse, yse, (ix - xnw) * (iy - ynw)},
				}
				for c := range C {
					v := 0.0
					for _, k := range corners {
						if k.x >= 0 && k.x < float64(W) && k.y >= 0 && k.y < float64(H) {
							v += k.w * x[((n*C+c)*H+int(k.y))*W+int(k.x)]
						}
					}
					out[((n*C+c)*OH+oh)*OW+ow] = v
				}
			}
		}
	}
	return out
}

func TestGridSample(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(15, 16))
	const N, C, H, W, OH, OW = 2, 3, 5, 4, 3, 6
	for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
		for _, border := range []bool{false, true} {
			for _, align := range []bool{false, true} {
				xv, gv := randn(rng, N*C*H*W), randn(rng, N*OH*OW*2)
				for i := range xv {
					xv[i] = round(dt, xv[i])
				}
				for i := range gv {
					gv[i] = round(dt, gv[i]*0.8)
				}
				gv[0], gv[1] = -1, 1 // corners
				gv[2], gv[3] = 1, -1
				x := h.strided(dt, xv, []int{N, C, H, W}, []int{0, 2, 3, 1}, 1, 1)
				g := h.view(dt, gv, N, OH, OW, 2)
				dst := h.zeros(dt, N, C, OH, OW)
				padding := hal.GridZeros
				if border {
					padding = hal.GridBorder
				}
				require.NoError(t, h.dev.GridSample(dst, x, g, padding, align))
				want := gridRef(xv, N, C, H, W, gv, OH, OW, border, align)
				near(t, want, h.read(dst), 4*eps(dt), 8*eps(dt), "%v border=%v align=%v", dt, border, align)
			}
		}
	}
}
