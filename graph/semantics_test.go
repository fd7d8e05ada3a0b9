package graph

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// The engine's contract as a user sees it: what is recorded, where
// gradients go, when the graph is freed and how misuse is reported. Every
// gradient is checked against a reference computed here in float64.

// semTol bounds |got − want| for float32 results of a few kernels:
// rtol·|want| + atol, with both well above float32 rounding (6e-8) times
// the handful of operations each value goes through.
const semTol = 1e-5

func requireNear(t testing.TB, what string, want, got []float64, tol float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*(1+math.Abs(want[i]))) {
			t.Fatalf("%s[%d]: got %.9g, want %.9g (|Δ| = %.3g, tolerance %.3g)\ngot  %v\nwant %v",
				what, i, got[i], want[i], d, tol*(1+math.Abs(want[i])), got, want)
		}
	}
}

func f64s(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// requireMisuse requires err to be the *tensor.Error a misuse panics with
// (caught by tensor.Catch, or returned by Backward and Grad), mentioning
// each of words.
func requireMisuse(t testing.TB, err error, words ...string) {
	t.Helper()
	require.Error(t, err)
	var te *tensor.Error
	require.True(t, errors.As(err, &te), "want a *tensor.Error, got %T: %v", err, err)
	for _, w := range words {
		require.Contains(t, err.Error(), w)
	}
}

func TestSemanticsNoGrad(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		x := param(dev, []float32{1, -2, 3}, 3)
		defer x.Release()

		s := NewScope(NoGrad)
		require.True(t, s.IsNoGrad())
		c := s.Use(x.Detach())
		// x requires a gradient, but c is under no-grad: nothing records.
		y := Mul(c, x)
		yy := Add(y, x).Sum(nil, false)
		// Outside the scope, the same parameter records as usual.
		rec := Mul(x, x)
		defer rec.Release()
		require.True(t, rec.RequiresGrad())

		require.False(t, y.RequiresGrad())
		require.True(t, y.IsLeaf(), "nothing was recorded")
		require.Nil(t, y.v)
		require.False(t, yy.RequiresGrad())
		require.Equal(t, []float64{1, 4, 9}, read(t, y), "no-grad computes all the same")
		require.Equal(t, []float64{1 + 1 + 4 - 2 + 9 + 3}, read(t, yy))

		err := Backward(yy)
		require.ErrorIs(t, err, ErrNoGradient)
		require.Nil(t, x.Grad())

		// A value kept out of a no-grad scope mixes with recorded ones as
		// a constant.
		s.Keep(y)
		s.Close()
		defer y.Release()
		loss := Mul(y, x).Sum(nil, false)
		defer loss.Release()
		require.True(t, loss.RequiresGrad())
		require.NoError(t, Backward(loss))
		require.Equal(t, []float64{1, 4, 9}, read(t, x.Grad()), "y is a constant: ∂(y·x)/∂x = y")
		require.Panics(t, func() { yy.Len() }, "Close released yy")
		require.Panics(t, func() { c.Len() }, "Close released c")
		require.Equal(t, []float64{1, -2, 3}, read(t, x), "x is not a member")
	})
}

func TestSemanticsDetach(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{0.5, -1.5, 2}
		x := param(dev, xs, 3)
		defer x.Release()
		y := Mul(x, x)

		quietGC(t, dev) // no cleanup of an earlier test's tensor in between
		before := dev.Stats().LiveBytes
		d := y.Detach()
		defer d.Release()
		require.Equal(t, before, dev.Stats().LiveBytes, "Detach shares y's memory")
		require.False(t, d.RequiresGrad())
		require.True(t, d.IsLeaf())
		require.Nil(t, d.Grad())
		y.Release() // the detached value keeps the data alive on its own
		require.Equal(t, []float64{0.25, 2.25, 4}, read(t, d))

		// loss = Σ d·x with d = x² held constant: ∂loss/∂x = x², not 3x².
		loss := Mul(d, x).Sum(nil, false)
		defer loss.Release()
		require.NoError(t, Backward(loss))
		want := make([]float64, len(xs))
		for i, v := range xs {
			want[i] = float64(v) * float64(v)
		}
		requireNear(t, "x.Grad", want, read(t, x.Grad()), semTol)

		// Nothing computed from a detached value alone is recorded.
		e := Mul(d, d)
		defer e.Release()
		require.False(t, e.RequiresGrad())
		require.ErrorIs(t, Backward(e.Sum(nil, false)), ErrNoGradient)
	})
}

// squareSum is Σ x², whose gradient is 2x.
func squareSum(x *Value) *Value {
	sq := Mul(x, x)
	defer sq.Release()
	return sq.Sum(nil, false)
}

func scaled(xs []float32, k float64) []float64 {
	out := make([]float64, len(xs))
	for i, v := range xs {
		out[i] = k * float64(v)
	}
	return out
}

func TestSemanticsAccumulation(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{1, -2, 0.5, 4}
		x := param(dev, xs, 2, 2)
		defer x.Release()

		l1 := squareSum(x)
		require.NoError(t, Backward(l1))
		l1.Release()
		requireNear(t, "after one pass", scaled(xs, 2), read(t, x.Grad()), semTol)
		// The Grad value is replaced by the next pass: keep it through Detach.
		first := x.Grad().Detach()
		defer first.Release()

		l2 := squareSum(x)
		require.NoError(t, Backward(l2))
		l2.Release()
		requireNear(t, "after two passes", scaled(xs, 4), read(t, x.Grad()), semTol)
		requireNear(t, "the detached first gradient", scaled(xs, 2), read(t, first), semTol)
		require.Equal(t, []int{2, 2}, x.Grad().Shape())
		require.False(t, x.Grad().RequiresGrad(), "a Grad without CreateGraph is a plain value")

		x.ZeroGrad()
		require.Nil(t, x.Grad())
		l3 := squareSum(x)
		require.NoError(t, Backward(l3))
		l3.Release()
		requireNear(t, "after ZeroGrad", scaled(xs, 2), read(t, x.Grad()), semTol)

		// The package-level ZeroGrad clears every value it is given,
		// whether it has a gradient or needs none.
		c := constant(dev, []float32{1}, 1)
		defer c.Release()
		ZeroGrad(x, c)
		require.Nil(t, x.Grad())
		require.Nil(t, c.Grad())
	})
}

func TestSemanticsRetainGraph(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{3, -1, 2}
		ws := []float32{0.5, 2, -1}
		x := param(dev, xs, 3)
		w := param(dev, ws, 3)
		defer x.Release()
		defer w.Release()
		// loss = Σ x²·w: ∂/∂x = 2xw, ∂/∂w = x².
		gx := make([]float64, 3)
		gw := make([]float64, 3)
		for i := range xs {
			gx[i] = 2 * float64(xs[i]) * float64(ws[i])
			gw[i] = float64(xs[i]) * float64(xs[i])
		}
		build := func() *Value {
			sq := Mul(x, x)
			defer sq.Release()
			p := Mul(sq, w)
			defer p.Release()
			return p.Sum(nil, false)
		}
		twice := func(g []float64) []float64 {
			out := make([]float64, len(g))
			for i, v := range g {
				out[i] = 2 * v
			}
			return out
		}

		t.Run("retained", func(t *testing.T) {
			ZeroGrad(x, w)
			loss := build()
			defer loss.Release()
			require.NoError(t, Backward(loss, RetainGraph))
			requireNear(t, "x.Grad once", gx, read(t, x.Grad()), semTol)
			require.NoError(t, Backward(loss), "a retained graph can be gone through again")
			requireNear(t, "x.Grad twice", twice(gx), read(t, x.Grad()), semTol)
			requireNear(t, "w.Grad twice", twice(gw), read(t, w.Grad()), semTol)
			// The second pass had no RetainGraph: it freed the graph.
			err := Backward(loss)
			require.ErrorIs(t, err, ErrGraphFreed)
			requireNear(t, "x.Grad after the failed pass", twice(gx), read(t, x.Grad()), semTol)
		})

		t.Run("default", func(t *testing.T) {
			ZeroGrad(x, w)
			loss := build()
			defer loss.Release()
			require.NoError(t, Backward(loss))
			err := Backward(loss)
			require.ErrorIs(t, err, ErrGraphFreed)
			require.Contains(t, err.Error(), "RetainGraph", "the error says how to avoid it")
			requireNear(t, "x.Grad", gx, read(t, x.Grad()), semTol)
			requireNear(t, "w.Grad", gw, read(t, w.Grad()), semTol)
			_, err = Grad([]*Value{loss}, []*Value{x}, nil)
			require.ErrorIs(t, err, ErrGraphFreed, "Grad sees the freed graph too")
		})

		t.Run("Grad frees by default", func(t *testing.T) {
			ZeroGrad(x, w)
			loss := build()
			defer loss.Release()
			gs, err := Grad([]*Value{loss}, []*Value{x}, nil, RetainGraph)
			require.NoError(t, err)
			requireNear(t, "Grad", gx, read(t, gs[0]), semTol)
			releaseValues(gs)
			gs, err = Grad([]*Value{loss}, []*Value{w}, nil)
			require.NoError(t, err)
			requireNear(t, "Grad again", gw, read(t, gs[0]), semTol)
			releaseValues(gs)
			_, err = Grad([]*Value{loss}, []*Value{w}, nil)
			require.ErrorIs(t, err, ErrGraphFreed)
			require.Nil(t, x.Grad(), "Grad leaves Grad alone")
			require.Nil(t, w.Grad())
		})
	})
}

func TestSemanticsLeafAndNonLeaf(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{1, 2, -3}
		x := param(dev, xs, 3)
		c := constant(dev, []float32{2, 2, 2}, 3)
		defer x.Release()
		defer c.Release()
		require.True(t, x.IsLeaf())
		require.True(t, x.RequiresGrad())
		require.True(t, c.IsLeaf())
		require.False(t, c.RequiresGrad())
		c.RetainGrad() // no effect on a value that needs no gradient

		h := Mul(x, x) // not retained
		k := Mul(x, c) // retained
		s := Add(h, k) // retained, and used twice below
		loss := Mul(s, s).Sum(nil, false)
		defer releaseValues([]*Value{h, k, s, loss})
		require.False(t, h.IsLeaf())
		require.True(t, h.RequiresGrad())
		k.RetainGrad()
		s.RetainGrad()
		loss.RetainGrad()

		require.NoError(t, Backward(loss))
		// loss = Σ s², s = x² + 2x: ∂loss/∂s = 2s, ∂loss/∂k = 2s,
		// ∂loss/∂x = 2s·(2x + 2).
		ds := make([]float64, 3)
		dx := make([]float64, 3)
		for i, v := range xs {
			xv := float64(v)
			sv := xv*xv + 2*xv
			ds[i] = 2 * sv
			dx[i] = 2 * sv * (2*xv + 2)
		}
		require.Nil(t, h.Grad(), "a computed value keeps no gradient unless retained")
		requireNear(t, "k.Grad", ds, read(t, k.Grad()), semTol)
		requireNear(t, "s.Grad", ds, read(t, s.Grad()), semTol)
		requireNear(t, "loss.Grad", []float64{1}, read(t, loss.Grad()), semTol)
		requireNear(t, "x.Grad", dx, read(t, x.Grad()), semTol)
		require.Nil(t, c.Grad())
	})
}

func TestSemanticsBackwardErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		x := param(dev, []float32{1, 2, 3}, 3)
		c := constant(dev, []float32{4, 5, 6}, 3)
		defer x.Release()
		defer c.Release()

		t.Run("non-scalar loss", func(t *testing.T) {
			y := Mul(x, x)
			defer y.Release()
			err := Backward(y)
			require.Error(t, err)
			require.NotErrorIs(t, err, ErrNoGradient)
			require.Contains(t, err.Error(), "single-element")
			require.Contains(t, err.Error(), "[3]")
			require.Nil(t, x.Grad())
			// The failed call did not free the graph.
			s := y.Sum(nil, false)
			defer s.Release()
			require.NoError(t, Backward(s))
			requireNear(t, "x.Grad", []float64{2, 4, 6}, read(t, x.Grad()), semTol)
			x.ZeroGrad()
		})

		t.Run("single element of rank 2", func(t *testing.T) {
			y := Mul(x, c).Sum(nil, true).Reshape(1, 1)
			defer y.Release()
			require.NoError(t, Backward(y))
			requireNear(t, "x.Grad", []float64{4, 5, 6}, read(t, x.Grad()), semTol)
			x.ZeroGrad()
		})

		t.Run("needs no gradient", func(t *testing.T) {
			y := Mul(c, c).Sum(nil, false)
			defer y.Release()
			err := Backward(y)
			require.ErrorIs(t, err, ErrNoGradient)
			_, err = Grad([]*Value{y}, []*Value{x}, nil)
			require.ErrorIs(t, err, ErrNoGradient)
		})
	})
}

func TestSemanticsGradVJP(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{0.5, -1, 2, 1.5, -0.25, 3}
		ws := []float32{2, -0.5, 1}
		ss := []float32{1, 2, -1, 0.5, 3, -2}
		s2s := []float32{-1, 0.25, 2, 1, -3, 0.5}
		x := param(dev, xs, 2, 3)
		w := param(dev, ws, 3)
		defer x.Release()
		defer w.Release()

		// y = x²·w (w broadcast over rows), z = x + w: both [2, 3].
		sq := Mul(x, x)
		y := Mul(sq, w)
		z := Add(x, w)
		sq.Release()
		defer y.Release()
		defer z.Release()
		s := constant(dev, ss, 2, 3)
		s2 := constant(dev, s2s, 2, 3)
		defer s.Release()
		defer s2.Release()

		// Σ s·y + Σ s2·z: ∂/∂x = 2·s·x·w + s2, ∂/∂w = Σ_rows (s·x² + s2).
		wantX := make([]float64, 6)
		wantW := make([]float64, 3)
		wantXy := make([]float64, 6)
		wantWy := make([]float64, 3)
		for i := range 2 {
			for j := range 3 {
				k := 3*i + j
				xv, wv, sv, s2v := float64(xs[k]), float64(ws[j]), float64(ss[k]), float64(s2s[k])
				wantXy[k] = 2 * sv * xv * wv
				wantWy[j] += sv * xv * xv
				wantX[k] = wantXy[k] + s2v
				wantW[j] += sv*xv*xv + s2v
			}
		}

		gs, err := Grad([]*Value{y}, []*Value{x, w}, []*Value{s}, RetainGraph)
		require.NoError(t, err)
		require.Len(t, gs, 2)
		require.Equal(t, []int{2, 3}, gs[0].Shape())
		require.Equal(t, []int{3}, gs[1].Shape())
		requireNear(t, "∂(s·y)/∂x", wantXy, read(t, gs[0]), semTol)
		requireNear(t, "∂(s·y)/∂w", wantWy, read(t, gs[1]), semTol)
		releaseValues(gs)

		gs, err = Grad([]*Value{y, z}, []*Value{x, w}, []*Value{s, s2})
		require.NoError(t, err)
		requireNear(t, "∂(s·y + s2·z)/∂x", wantX, read(t, gs[0]), semTol)
		requireNear(t, "∂(s·y + s2·z)/∂w", wantW, read(t, gs[1]), semTol)
		releaseValues(gs)
		require.Nil(t, x.Grad(), "Grad does not accumulate into Grad")
		require.Nil(t, w.Grad())
	})
}

func TestSemanticsGradAllowUnused(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		x := param(dev, []float32{1, -2}, 2)
		u := param(dev, []float32{7}, 1)
		defer x.Release()
		defer u.Release()

		loss := squareSum(x)
		defer loss.Release()
		_, err := Grad([]*Value{loss}, []*Value{x, u}, nil, RetainGraph)
		require.ErrorIs(t, err, ErrNoGradient)
		require.Contains(t, err.Error(), "input 1", "the error names the unused input")
		require.Contains(t, err.Error(), "AllowUnused")

		gs, err := Grad([]*Value{loss}, []*Value{x, u}, nil, AllowUnused)
		require.NoError(t, err)
		defer releaseValues(gs)
		require.Len(t, gs, 2)
		requireNear(t, "∂/∂x", []float64{2, -4}, read(t, gs[0]), semTol)
		require.Nil(t, gs[1])
	})
}

// Grad's inputs need not be leaves, and its seeds may themselves require a
// gradient.
func TestSemanticsGradTargets(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{1.5, -0.5, 2}
		x := param(dev, xs, 3)
		defer x.Release()

		t.Run("intermediate", func(t *testing.T) {
			// loss = Σ h·h·x with h = x + x: ∂loss/∂h = 2hx = 4x².
			h := Add(x, x)
			defer h.Release()
			h.RetainGrad()
			hh := Mul(h, h)
			defer hh.Release()
			p := Mul(hh, x)
			defer p.Release()
			loss := p.Sum(nil, false)
			defer loss.Release()
			gs, err := Grad([]*Value{loss}, []*Value{h}, nil)
			require.NoError(t, err)
			defer releaseValues(gs)
			want := make([]float64, 3)
			for i, v := range xs {
				want[i] = 4 * float64(v) * float64(v)
			}
			requireNear(t, "∂loss/∂h", want, read(t, gs[0]), semTol)
			require.Nil(t, h.Grad(), "Grad fills no Grad, retained or not")
			require.Nil(t, x.Grad())
		})

		t.Run("output itself", func(t *testing.T) {
			y := Mul(x, x)
			defer y.Release()
			s := constant(dev, []float32{3, -1, 0.5}, 3)
			defer s.Release()
			gs, err := Grad([]*Value{y}, []*Value{y, x}, []*Value{s})
			require.NoError(t, err)
			defer releaseValues(gs)
			requireNear(t, "∂(s·y)/∂y", []float64{3, -1, 0.5}, read(t, gs[0]), semTol)
			requireNear(t, "∂(s·y)/∂x", []float64{9, 1, 2}, read(t, gs[1]), semTol)
		})

		t.Run("leaf loss", func(t *testing.T) {
			one := param(dev, []float32{5}, 1)
			defer one.Release()
			require.NoError(t, Backward(one))
			require.NoError(t, Backward(one), "a leaf has no graph to free")
			requireNear(t, "Grad", []float64{2}, read(t, one.Grad()), semTol)
		})

		t.Run("seed requiring a gradient", func(t *testing.T) {
			// g(u) = ∂(u·x²)/∂x = 2xu is linear in the seed u:
			// ∂(Σg)/∂u = 2x (the double-backward trick for JVPs).
			y := Mul(x, x)
			defer y.Release()
			u := param(dev, []float32{1, 1, 1}, 3)
			defer u.Release()
			gs, err := Grad([]*Value{y}, []*Value{x}, []*Value{u}, CreateGraph)
			require.NoError(t, err)
			defer releaseValues(gs)
			requireNear(t, "g", scaled(xs, 2), read(t, gs[0]), semTol)
			s := gs[0].Sum(nil, false)
			defer s.Release()
			gu, err := Grad([]*Value{s}, []*Value{u}, nil)
			require.NoError(t, err)
			defer releaseValues(gu)
			requireNear(t, "∂Σg/∂u", scaled(xs, 2), read(t, gu[0]), semTol)
		})

		// As torch.autograd.grad, an input listed twice gets its
		// gradient twice.
		t.Run("same input twice", func(t *testing.T) {
			loss := squareSum(x)
			defer loss.Release()
			gs, err := Grad([]*Value{loss}, []*Value{x, x}, nil)
			require.NoError(t, err)
			defer releaseValues(gs)
			require.Len(t, gs, 2)
			requireNear(t, "first", scaled(xs, 2), read(t, gs[0]), semTol)
			requireNear(t, "second", scaled(xs, 2), read(t, gs[1]), semTol)
		})
	})
}

// Graphs built and differentiated on several goroutines at once, sharing
// one parameter: every pass's gradient lands in its Grad.
func TestSemanticsConcurrentBackward(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{0.5, -1, 1.5, 2}
		x := param(dev, xs, 4)
		defer x.Release()
		const workers, rounds = 4, 5
		errs := make(chan error, workers*rounds)
		done := make(chan struct{})
		for k := 1; k <= workers; k++ {
			go func() {
				defer func() { done <- struct{}{} }()
				for range rounds {
					errs <- tensor.Catch(func() {
						// loss = k·Σx²: its gradient is 2k·x.
						sq := Mul(x, x)
						defer sq.Release()
						w := sq.MulScalar(float64(k))
						defer w.Release()
						loss := w.Sum(nil, false)
						defer loss.Release()
						if err := Backward(loss); err != nil {
							panic(&tensor.Error{Op: "test", Err: err})
						}
					})
				}
			}()
		}
		for range workers {
			<-done
		}
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		// Σₖ rounds·2k·x = rounds·workers·(workers+1)·x.
		requireNear(t, "x.Grad", scaled(xs, rounds*workers*(workers+1)), read(t, x.Grad()), semTol)
	})
}

func TestSemanticsMisuse(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		x := param(dev, []float32{1, 2}, 2)
		defer x.Release()
		gone := param(dev, []float32{1, 2}, 2)
		gone.Release()
		gone.Release() // idempotent
		var none *Value

		for _, tc := range []struct {
			name  string
			f     func()
			words []string
		}{
			{"Add nil", func() { Add(x, nil) }, []string{"nil"}},
			{"Mul nil", func() { Mul(none, x) }, []string{"nil"}},
			{"Sum nil", func() { none.Sum(nil, false) }, nil},
			{"Mul released", func() { Mul(x, gone) }, []string{"Mul", "released"}},
			{"Sum released", func() { gone.Sum(nil, false) }, []string{"released"}},
			{"Grad released", func() { gone.Grad() }, []string{"Grad", "released"}},
			{"Tensor released", func() { gone.Tensor() }, []string{"released"}},
			{"Shape released", func() { gone.Shape() }, []string{"released"}},
			{"Detach released", func() { gone.Detach() }, []string{"released"}},
			{"ZeroGrad released", func() { gone.ZeroGrad() }, []string{"released"}},
			{"RequiresGrad nil", func() { none.RequiresGrad() }, []string{"nil value"}},
			{"Param nil", func() { Param(nil) }, []string{"Param", "nil"}},
			{"Constant nil", func() { Constant(nil) }, []string{"Constant", "nil"}},
			{"Param int32", func() { Param(tensor.FromInt32(dev, []int32{1}, 1)) }, []string{"Param", "floating"}},
			{"Param released tensor", func() {
				tt := tensor.FromFloat32(dev, []float32{1}, 1)
				tt.Release()
				Param(tt)
			}, []string{"Param", "released"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = tensor.Catch(tc.f) }, "the panic is a *tensor.Error")
				requireMisuse(t, err, tc.words...)
			})
		}
		require.Equal(t, "value (released)", gone.String())
		require.Equal(t, "value <nil>", none.String())

		// Backward and Grad return misuse as an error instead of panicking.
		loss := squareSum(x)
		defer loss.Release()
		s := constant(dev, []float32{1, 1, 1}, 3)
		defer s.Release()
		c := constant(dev, []float32{1, 1}, 2)
		defer c.Release()
		for _, tc := range []struct {
			name  string
			f     func() error
			words []string
		}{
			{"Backward nil", func() error { return Backward(nil) }, []string{"nil"}},
			{"Backward released", func() error { return Backward(gone) }, []string{"released"}},
			{"Grad released output", func() error { _, err := Grad([]*Value{gone}, []*Value{x}, nil); return err }, []string{"released"}},
			{"Grad released input", func() error { _, err := Grad([]*Value{loss}, []*Value{gone}, nil); return err }, []string{"released"}},
			{"Grad nil output", func() error { _, err := Grad([]*Value{nil}, []*Value{x}, nil); return err }, []string{"nil"}},
			{"Grad nil input", func() error { _, err := Grad([]*Value{loss}, []*Value{nil}, nil); return err }, []string{"nil"}},
			{"Grad no outputs", func() error { _, err := Grad(nil, []*Value{x}, nil); return err }, []string{"no outputs"}},
			{"Grad constant input", func() error { _, err := Grad([]*Value{loss}, []*Value{c}, nil); return err }, []string{"does not require a gradient"}},
			{"Grad seed count", func() error { _, err := Grad([]*Value{loss}, []*Value{x}, []*Value{s, s}); return err }, []string{"2 seeds for 1 outputs"}},
			{"Grad seed shape", func() error { _, err := Grad([]*Value{loss}, []*Value{x}, []*Value{s}); return err }, []string{"seed 0"}},
			{"Grad non-scalar without seed", func() error { _, err := Grad([]*Value{x}, []*Value{x}, nil); return err }, []string{"give a seed"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = tc.f() })
				requireMisuse(t, err, tc.words...)
			})
		}
		// None of the failed calls went through the graph.
		require.NoError(t, Backward(loss))
		requireNear(t, "x.Grad", []float64{2, 4}, read(t, x.Grad()), semTol)
	})
}

func TestSemanticsSameValueTwice(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{1.5, -2, 0.25}
		for _, tc := range []struct {
			name string
			f    func(x *Value) *Value
			want func(x float64) float64
		}{
			{"x·x", func(x *Value) *Value { return Mul(x, x) }, func(x float64) float64 { return 2 * x }},
			{"x+x", func(x *Value) *Value { return Add(x, x) }, func(float64) float64 { return 2 }},
			{"x·x+x", func(x *Value) *Value {
				sq := Mul(x, x)
				defer sq.Release()
				return Add(sq, x)
			}, func(x float64) float64 { return 2*x + 1 }},
			{"(x+x)·x·x", func(x *Value) *Value {
				d := Add(x, x)
				defer d.Release()
				dx := Mul(d, x)
				defer dx.Release()
				return Mul(dx, x)
			}, func(x float64) float64 { return 6 * x * x }},
			{"via views", func(x *Value) *Value {
				// The same value reaches the result along two paths
				// through different views.
				col := x.Reshape(3, 1)
				defer col.Release()
				a := col.Expand(3, 2)
				defer a.Release()
				twice := a.Sum([]int{1}, false)
				defer twice.Release()
				row := x.Reshape(1, 3)
				defer row.Release()
				flat := row.Reshape(3)
				defer flat.Release()
				return Mul(twice, flat)
			}, func(x float64) float64 { return 4 * x }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				x := param(dev, xs, 3)
				defer x.Release()
				y := tc.f(x)
				defer y.Release()
				l := y.Sum(nil, false)
				defer l.Release()
				require.NoError(t, Backward(l))
				want := make([]float64, len(xs))
				for i, v := range xs {
					want[i] = tc.want(float64(v))
				}
				requireNear(t, "x.Grad", want, read(t, x.Grad()), semTol)
			})
		}
	})
}

func TestSemanticsBroadcastUndone(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		// X [4, 3] plus a bias b: the loss weights each element by C.
		cs := make([]float32, 12)
		xs := make([]float32, 12)
		for i := range cs {
			cs[i] = float32(i%5) - 1.5 + float32(i)/8
			xs[i] = float32(i) / 4
		}
		colSums := make([]float64, 3)
		rowSums := make([]float64, 4)
		total := 0.0
		for i := range 4 {
			for j := range 3 {
				c := float64(cs[3*i+j])
				colSums[j] += c
				rowSums[i] += c
				total += c
			}
		}
		for _, tc := range []struct {
			name  string
			shape []int
			want  []float64
		}{
			{"[3]", []int{3}, colSums},
			{"[1, 3]", []int{1, 3}, colSums},
			{"[4, 1]", []int{4, 1}, rowSums},
			{"[1]", []int{1}, []float64{total}},
			{"[2, 4, 3]", []int{2, 4, 3}, nil}, // the bias broadcasts X instead
		} {
			t.Run(tc.name, func(t *testing.T) {
				n := 1
				for _, d := range tc.shape {
					n *= d
				}
				bs := make([]float32, n)
				for i := range bs {
					bs[i] = float32(i) - 1
				}
				X := param(dev, xs, 4, 3)
				b := param(dev, bs, tc.shape...)
				C := constant(dev, cs, 4, 3)
				defer releaseValues([]*Value{X, b, C})
				sum := Add(X, b)
				weighted := Mul(sum, C)
				loss := weighted.Sum(nil, false)
				sum.Release()
				weighted.Release()
				defer loss.Release()
				require.NoError(t, Backward(loss))
				require.Equal(t, tc.shape, b.Grad().Shape())
				require.Equal(t, []int{4, 3}, X.Grad().Shape())
				want, wantX := tc.want, f64s(cs)
				if want == nil {
					// X broadcasts over the new leading axis: each of
					// its elements is counted twice; b's gradient is C
					// repeated.
					want = append(f64s(cs), f64s(cs)...)
					wantX = scaled(cs, 2)
				}
				requireNear(t, "b.Grad", want, read(t, b.Grad()), semTol)
				requireNear(t, "X.Grad", wantX, read(t, X.Grad()), semTol)
			})
		}
	})
}

func TestSemanticsNonDifferentiable(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		xs := []float32{0.5, -1, 2, -0.25, 3, 1}
		x := param(dev, xs, 2, 3)
		zero := constant(dev, []float32{0}, 1)
		defer x.Release()
		defer zero.Release()
		for _, tc := range []struct {
			op string
			f  func() *Value
		}{
			{"ArgMax", func() *Value {
				i := x.ArgMax([]int{1}, false)
				defer i.Release()
				return i.Cast(tensor.Float32)
			}},
			{"Gt", func() *Value {
				m := Gt(x, zero)
				defer m.Release()
				return m.Cast(tensor.Float32)
			}},
		} {
			t.Run(tc.op, func(t *testing.T) {
				y := tc.f()
				defer y.Release()
				require.False(t, y.RequiresGrad(), "nothing flows back through %s", tc.op)
				loss := y.Sum(nil, false)
				defer loss.Release()
				err := Backward(loss)
				require.ErrorIs(t, err, ErrNoGradient)
				require.Contains(t, err.Error(), tc.op)
				_, err = Grad([]*Value{loss}, []*Value{x}, nil)
				require.ErrorIs(t, err, ErrNoGradient)
				require.Contains(t, err.Error(), tc.op)

				// Beside a differentiable path, the non-differentiable
				// one just contributes nothing: ∂(Σx² + Σy)/∂x = 2x.
				sq := squareSum(x)
				defer sq.Release()
				mixed := Add(sq, loss)
				defer mixed.Release()
				require.NoError(t, Backward(mixed))
				requireNear(t, "x.Grad", scaled(xs, 2), read(t, x.Grad()), semTol)
				x.ZeroGrad()
			})
		}
	})
}

// TestSemanticsBackwardStaysOnDevice builds a graph of a dozen recorded
// operations and requires that neither Backward nor Grad with
// CreateGraph reads anything back to the host, while reading a gradient
// afterwards does (so the counter is live).
func TestSemanticsBackwardStaysOnDevice(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		x0 := []float32{0.1, -0.2, 0.3, 0.4, -0.5, 0.6}
		w0 := []float32{0.5, -0.25, 0.75, 1, -1, 0.5}
		b0 := []float32{0.1, -0.1}
		x := param(dev, x0, 2, 3)
		w := param(dev, w0, 3, 2)
		b := param(dev, b0, 2)
		defer releaseValues([]*Value{x, w, b})

		build := func() *Value {
			var tmp []*Value
			keep := func(v *Value) *Value { tmp = append(tmp, v); return v }
			defer func() { releaseValues(tmp) }()
			h := keep(MatMul(x, w))           // 1
			h = keep(Add(h, b))               // 2
			a := keep(Tanh(h))                // 3
			e := keep(Exp(a))                 // 4
			p := keep(Mul(a, e))              // 5
			d := keep(Sub(p, h))              // 6
			d = keep(d.Reshape(4))            // 7
			q := keep(Mul(d, d))              // 8
			r := keep(Sigmoid(q))             // 9
			r = keep(r.Reshape(2, 2))         // 10
			s := keep(r.Sum([]int{0}, false)) // 11
			return s.Sum(nil, false)          // 12
		}
		loss := build()
		defer loss.Release()
		require.True(t, loss.RequiresGrad())
		order, err := topoOrder("test", []*Value{loss})
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(order), 10, "recorded operations")
		require.NoError(t, dev.Sync())

		reads := dev.Stats().HostReads
		require.NoError(t, Backward(loss))
		require.NoError(t, dev.Sync())
		require.Equal(t, reads, dev.Stats().HostReads, "Backward read from the device")
		wantX, wantW, wantB := onDeviceReference(x0, w0, b0)
		requireNear(t, "x.Grad", wantX, read(t, x.Grad()), semTol)
		requireNear(t, "w.Grad", wantW, read(t, w.Grad()), semTol)
		requireNear(t, "b.Grad", wantB, read(t, b.Grad()), semTol)
		ZeroGrad(x, w, b)

		loss2 := build()
		defer loss2.Release()
		reads = dev.Stats().HostReads
		gs, err := Grad([]*Value{loss2}, []*Value{x, w, b}, nil, CreateGraph)
		require.NoError(t, err)
		defer releaseValues(gs)
		gn := Mul(gs[0], gs[0]).Sum(nil, false)
		defer gn.Release()
		require.NoError(t, Backward(gn))
		require.NoError(t, dev.Sync())
		require.Equal(t, reads, dev.Stats().HostReads, "Grad with CreateGraph, then Backward, read from the device")

		_ = read(t, x.Grad())
		require.Greater(t, dev.Stats().HostReads, reads, "reading a gradient is a host read")
	})
}

// onDeviceReference is the gradient of TestSemanticsBackwardStaysOnDevice's
// loss, Σ σ(d²) with d = tanh(h)·exp(tanh(h)) − h and h = x·w + b, by hand
// in float64.
func onDeviceReference(x0, w0, b0 []float32) (gx, gw, gb []float64) {
	x, w, b := f64s(x0), f64s(w0), f64s(b0)
	gx, gw, gb = make([]float64, 6), make([]float64, 6), make([]float64, 2)
	for i := range 2 {
		for j := range 2 {
			h := b[j]
			for k := range 3 {
				h += x[3*i+k] * w[2*k+j]
			}
			a := math.Tanh(h)
			e := math.Exp(a)
			d := a*e - h
			sig := 1 / (1 + math.Exp(-d*d))
			dd := sig * (1 - sig) * 2 * d
			dh := dd*e*(1+a)*(1-a*a) - dd
			gb[j] += dh
			for k := range 3 {
				gw[2*k+j] += x[3*i+k] * dh
				gx[3*i+k] += w[2*k+j] * dh
			}
		}
	}
	return gx, gw, gb
}
