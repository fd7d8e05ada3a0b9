package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// strided uploads a view of shape whose element at row-major index i is
// vals[i], laid out with the axes stored in the order perm (outermost
// first), every stride scaled by step, after offset elements.
func (h harness) strided(dt hal.DType, vals []float64, shape, perm []int, step, offset int) hal.View {
	strides := make([]int, len(shape))
	s := step
	for k := len(perm) - 1; k >= 0; k-- {
		strides[perm[k]] = s
		s *= shape[perm[k]]
	}
	return h.laidOut(dt, vals, shape, strides, offset, offset+s)
}

// laidOut stores vals (row-major over shape) at the positions strides and
// offset give, in a buffer of size elements whose others are NaN: gaps
// must never be read.
func (h harness) laidOut(dt hal.DType, vals []float64, shape, strides []int, offset, size int) hal.View {
	store := make([]float64, size)
	for i := range store {
		store[i] = math.NaN()
	}
	i := 0
	forEachPos(shape, strides, offset, func(pos int) { store[pos] = vals[i]; i++ })
	return hal.View{Buf: h.buffer(dt, store), DType: dt, Offset: offset, Shape: shape, Strides: strides}
}

func TestMatMul(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(9, 10))
	type layout struct {
		perm       []int
		step       int
		broadcast0 bool // the batch axis has stride 0
	}
	rowMajor := layout{perm: []int{0, 1, 2}, step: 1}
	for _, c := range []struct {
		name        string
		B, M, K, N  int
		la, lb      layout
		alpha, beta float64
	}{
		{"plain", 1, 5, 3, 7, rowMajor, rowMajor, 1, 0},
		{"transposed a", 2, 5, 3, 7, layout{perm: []int{0, 2, 1}, step: 1}, rowMajor, 1, 0},
		{"transposed b", 2, 5, 3, 7, rowMajor, layout{perm: []int{0, 2, 1}, step: 1}, 1, 0},
		{"both transposed", 3, 4, 6, 5, layout{perm: []int{0, 2, 1}, step: 1}, layout{perm: []int{0, 2, 1}, step: 1}, 1, 0},
		{"packed", 2, 5, 3, 7, layout{perm: []int{0, 1, 2}, step: 2}, layout{perm: []int{2, 0, 1}, step: 3}, 1, 0},
		{"broadcast a", 4, 3, 5, 2, layout{perm: []int{0, 1, 2}, step: 1, broadcast0: true}, rowMajor, 1, 0},
		{"alpha beta", 2, 6, 4, 3, rowMajor, rowMajor, -0.5, 2},
		{"vector", 3, 1, 9, 1, rowMajor, rowMajor, 1, 0},
		{"empty k", 2, 3, 0, 4, rowMajor, rowMajor, 1, 0.5},
		{"many small", 300, 3, 4, 5, rowMajor, layout{perm: []int{0, 2, 1}, step: 1}, 1, 0},
		{"large", 1, 130, 257, 129, rowMajor, rowMajor, 1, 0},
		{"odd transposed", 2, 17, 300, 33, layout{perm: []int{0, 2, 1}, step: 1}, layout{perm: []int{0, 2, 1}, step: 1}, 1, 0},
		{"tall strided", 1, 1025, 7, 20, layout{perm: []int{0, 1, 2}, step: 2}, layout{perm: []int{2, 0, 1}, step: 1}, 1, 1},
		{"wide broadcast", 3, 7, 65, 1030, rowMajor, layout{perm: []int{0, 2, 1}, step: 1, broadcast0: true}, 0.5, 0},
		{"batched parallel", 5, 70, 90, 100, layout{perm: []int{0, 2, 1}, step: 1}, rowMajor, 1, -1},
	} {
		for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				withKernels(t, func(t *testing.T) {
					mk := func(l layout, rows, cols int) (hal.View, []float64) {
						b := c.B
						if l.broadcast0 {
							b = 1
						}
						vals := randn(rng, b*rows*cols)
						for i := range vals {
							vals[i] = round(dt, vals[i])
						}
						v := h.strided(dt, vals, []int{b, rows, cols}, l.perm, l.step, 1)
						if l.broadcast0 {
							v.Shape[0], v.Strides[0] = c.B, 0
							vals = append([]float64{}, vals...)
							for len(vals) < c.B*rows*cols {
								vals = append(vals, vals[:rows*cols]...)
							}
						}
						return v, vals
					}
					a, av := mk(c.la, c.M, c.K)
					b, bv := mk(c.lb, c.K, c.N)
					dv := randn(rng, c.B*c.M*c.N)
					if c.beta == 0 {
						for i := range dv {
							dv[i] = math.NaN() // ignored when beta = 0
						}
					}
					dst := h.view(dt, dv, c.B, c.M, c.N)
					old := h.read(dst)
					require.NoError(t, h.dev.MatMul(dst, a, b, c.alpha, c.beta))
					got := h.read(dst)
					want := make([]float64, len(got))
					for p := range c.B {
						for i := range c.M {
							for j := range c.N {
								s, mag := 0.0, 0.0
								for k := range c.K {
									x := av[(p*c.M+i)*c.K+k] * bv[(p*c.K+k)*c.N+j]
									s += x
									mag += math.Abs(x)
								}
								o := (p*c.M+i)*c.N + j
								w := c.alpha * s
								if c.beta != 0 {
									w += c.beta * old[o]
								}
								want[o] = w
								tol := 4*eps(dt)*(float64(c.K)*math.Abs(c.alpha)*mag+math.Abs(c.beta*old[o])) + 4*eps(dt)*math.Abs(w)
								require.InDelta(t, w, got[o], tol+1e-12, "%s %v element %d", c.name, dt, o)
							}
						}
					}
				})
			})
		}
	}
}
