package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

func TestInit(t *testing.T) {
	dev := cpuDevice(t)
	gen := tensor.NewGenerator(1)
	stats := func(w *graph.Value) (maxAbs, mean, std float64) {
		v := read(t, w)
		for _, a := range v {
			maxAbs = math.Max(maxAbs, math.Abs(a))
			mean += a
		}
		mean /= float64(len(v))
		for _, a := range v {
			std += (a - mean) * (a - mean)
		}
		return maxAbs, mean, math.Sqrt(std / float64(len(v)))
	}
	w := graph.Param(tensor.Zeros(dev, 80, 40, 2, 2)) // fan_in 160, fan_out 320
	defer w.Release()
	fi, fo := Fans(w.Shape())
	require.Equal(t, [2]int{160, 320}, [2]int{fi, fo})

	cases := []struct {
		name    string
		init    func()
		uniform bool
		bound   float64 // the bound of a uniform, the std of a normal
	}{
		{"KaimingUniform", func() { KaimingUniform(w, math.Sqrt(5), gen) }, true, 1 / math.Sqrt(160)},
		{"KaimingUniformReLU", func() { KaimingUniform(w, 0, gen) }, true, math.Sqrt(6.0 / 160)},
		{"KaimingNormal", func() { KaimingNormal(w, 0, gen) }, false, math.Sqrt(2.0 / 160)},
		{"XavierUniform", func() { XavierUniform(w, 2, gen) }, true, 2 * math.Sqrt(6.0/480)},
		{"XavierNormal", func() { XavierNormal(w, 1, gen) }, false, math.Sqrt(2.0 / 480)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.init()
			maxAbs, mean, std := stats(w)
			if c.uniform {
				require.LessOrEqual(t, maxAbs, c.bound*(1+1e-6))
				require.Greater(t, maxAbs, 0.98*c.bound)
				require.InDelta(t, c.bound/math.Sqrt(3), std, 0.03*c.bound)
			} else {
				require.InDelta(t, c.bound, std, 0.04*c.bound)
			}
			require.InDelta(t, 0, mean, 0.05*c.bound)
		})
	}

	// A seed gives the same network on every device.
	a := NewLinear(dev, 5, 3, true, tensor.NewGenerator(9))
	defer Release(a)
	forEachDevice(t, func(t *testing.T, e env) {
		if e.dt != tensor.Float32 {
			t.Skip("layers are built in float32")
		}
		b := NewLinear(e.dev, 5, 3, true, tensor.NewGenerator(9))
		defer Release(b)
		require.Equal(t, read(t, a.Weight), read(t, b.Weight))
		require.Equal(t, read(t, a.Bias), read(t, b.Bias))
	})
}

func TestLinear(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		gen := tensor.NewGenerator(3)
		l := NewLinear(e.dev, 4, 5, true, gen)
		defer Release(l)
		require.Equal(t, []string{"weight", "bias"}, names(l.Parameters()))
		require.Equal(t, []int{5, 4}, l.Weight.Shape())
		require.Equal(t, []int{5}, l.Bias.Shape())
		require.Empty(t, l.Buffers())
		require.Equal(t, 25, NumParams(l))
		bound := 1 / math.Sqrt(4)
		for _, v := range append(read(t, l.Weight), read(t, l.Bias)...) {
			require.LessOrEqual(t, math.Abs(v), bound)
		}
		randomize(e, l, 10)
		w, b := read(t, l.Weight), read(t, l.Bias)

		for _, shape := range [][]int{{3, 4}, {2, 3, 4}, {4}} {
			n := 1
			for _, d := range shape[:len(shape)-1] {
				n *= d
			}
			xd := randn(20, n*4, 1)
			x := e.constant(xd, shape...)
			y := l.Forward(x)
			want := append(append([]int(nil), shape[:len(shape)-1]...), 5)
			require.Equal(t, want, y.Shape())
			near(t, matmulT(xd, n, 4, w, 5, b), read(t, y), e.tol)
			backwardSum(t, y)
			requireGrads(t, l)
			// ∂Σy/∂b = number of rows.
			near(t, []float64{float64(n), float64(n), float64(n), float64(n), float64(n)}, read(t, l.Bias.Grad()), e.tol)
			ZeroGrad(l)
			x.Release()
			y.Release()
		}

		nb := NewLinear(e.dev, 4, 2, false, gen)
		defer Release(nb)
		require.Nil(t, nb.Bias)
		require.Equal(t, []string{"weight"}, names(nb.Parameters()))
		randomize(e, nb, 11)
		xd := randn(21, 12, 1)
		x := e.constant(xd, 3, 4)
		defer x.Release()
		y := nb.Forward(x)
		defer y.Release()
		near(t, matmulT(xd, 3, 4, read(t, nb.Weight), 2, nil), read(t, y), e.tol)

		bad := e.constant(make([]float64, 6), 2, 3)
		defer bad.Release()
		err := tensor.Catch(func() { l.Forward(bad) })
		require.ErrorContains(t, err, "nn.Linear: input [2 3] does not end in the layer's 4 input features")
	})
}

// conv2dRef is a direct float64 convolution (one group).
func conv2dRef(x []float64, n, cin, h, w int, wt []float64, cout, kh, kw int, b []float64, stride, pad int) ([]float64, int, int) {
	oh, ow := (h+2*pad-kh)/stride+1, (w+2*pad-kw)/stride+1
	out := make([]float64, n*cout*oh*ow)
	for i := range n {
		for o := range cout {
			for y := range oh {
				for z := range ow {
					s := b[o]
					for c := range cin {
						for p := range kh {
							for q := range kw {
								yy, zz := y*stride-pad+p, z*stride-pad+q
								if yy < 0 || yy >= h || zz < 0 || zz >= w {
									continue
								}
								s += x[((i*cin+c)*h+yy)*w+zz] * wt[((o*cin+c)*kh+p)*kw+q]
							}
						}
					}
					out[((i*cout+o)*oh+y)*ow+z] = s
				}
			}
		}
	}
	return out, oh, ow
}

func TestConv2d(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		gen := tensor.NewGenerator(4)
		o := tensor.ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}
		c := NewConv2d(e.dev, 2, 3, [2]int{3, 3}, o, true, gen)
		defer Release(c)
		require.Equal(t, []string{"weight", "bias"}, names(c.Parameters()))
		require.Equal(t, []int{3, 2, 3, 3}, c.Weight.Shape())
		require.Equal(t, []int{3}, c.Bias.Shape())
		bound := 1 / math.Sqrt(18)
		for _, v := range append(read(t, c.Weight), read(t, c.Bias)...) {
			require.LessOrEqual(t, math.Abs(v), bound)
		}
		randomize(e, c, 30)
		xd := randn(31, 2*2*5*5, 1)
		x := e.constant(xd, 2, 2, 5, 5)
		defer x.Release()
		y := c.Forward(x)
		defer y.Release()
		want, oh, ow := conv2dRef(xd, 2, 2, 5, 5, read(t, c.Weight), 3, 3, 3, read(t, c.Bias), 2, 1)
		require.Equal(t, []int{2, 3, oh, ow}, y.Shape())
		near(t, want, read(t, y), e.tol)
		backwardSum(t, y)
		requireGrads(t, c)

		g := NewConv2d(e.dev, 4, 6, [2]int{1, 3}, tensor.ConvOptions{Groups: 2}, false, gen)
		defer Release(g)
		require.Equal(t, []int{6, 2, 1, 3}, g.Weight.Shape())
		require.Equal(t, []string{"weight"}, names(g.Parameters()))
		require.ErrorContains(t, tensor.Catch(func() {
			NewConv2d(e.dev, 3, 6, [2]int{1, 1}, tensor.ConvOptions{Groups: 2}, true, gen)
		}), "not divisible by 2 groups")
	})
}

func TestConvTranspose2d(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		gen := tensor.NewGenerator(5)
		o := tensor.ConvTransposeOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 1}}
		c := NewConvTranspose2d(e.dev, 2, 3, [2]int{3, 3}, o, true, gen)
		defer Release(c)
		require.Equal(t, []string{"weight", "bias"}, names(c.Parameters()))
		require.Equal(t, []int{2, 3, 3, 3}, c.Weight.Shape())
		require.Equal(t, []int{3}, c.Bias.Shape())
		bound := 1 / math.Sqrt(27) // fan_in from the weight's axis 1, as PyTorch
		for _, v := range append(read(t, c.Weight), read(t, c.Bias)...) {
			require.LessOrEqual(t, math.Abs(v), bound)
		}
		castModule(e, c)
		x := e.constant(randn(40, 2*2*4*4, 1), 2, 2, 4, 4)
		defer x.Release()
		y := c.Forward(x)
		defer y.Release()
		require.Equal(t, []int{2, 3, 8, 8}, y.Shape()) // (4−1)·2 − 2 + 3 + 1
		backwardSum(t, y)
		requireGrads(t, c)

		// A transposed convolution of a 1×1 input with stride 1 stamps the
		// kernel: y[o] = x·W[c, o] + b[o].
		one := NewConvTranspose2d(e.dev, 1, 2, [2]int{2, 2}, tensor.ConvTransposeOptions{}, true, gen)
		defer Release(one)
		randomize(e, one, 41)
		x1 := e.constant([]float64{1.5}, 1, 1, 1, 1)
		defer x1.Release()
		y1 := one.Forward(x1)
		defer y1.Release()
		w, b := read(t, one.Weight), read(t, one.Bias)
		want := make([]float64, 8)
		for i := range want {
			want[i] = 1.5*w[i] + b[i/4]
		}
		near(t, want, read(t, y1), e.tol)
	})
}

func TestPooling(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		xd := randn(50, 2*3*4*4, 1)
		x := e.param(xd, 2, 3, 4, 4)
		defer x.Release()
		at := func(i, j, k int) float64 { return xd[i*16+j*4+k] } // plane i = n·3+c

		mp := NewMaxPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}})
		ap := NewAvgPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}}, true)
		aap := NewAdaptiveAvgPool2d(1, 2)
		maxWant, avgWant, adWant := make([]float64, 24), make([]float64, 24), make([]float64, 12)
		for p := range 6 {
			for a := range 2 {
				for b := range 2 {
					m, s := math.Inf(-1), 0.0
					for u := range 2 {
						for v := range 2 {
							m = math.Max(m, at(p, 2*a+u, 2*b+v))
							s += at(p, 2*a+u, 2*b+v)
						}
					}
					maxWant[p*4+a*2+b], avgWant[p*4+a*2+b] = m, s/4
					adWant[p*2+b] += s / 8
				}
			}
		}
		for _, c := range []struct {
			name  string
			m     Module
			shape []int
			want  []float64
		}{
			{"MaxPool2d", mp, []int{2, 3, 2, 2}, maxWant},
			{"AvgPool2d", ap, []int{2, 3, 2, 2}, avgWant},
			{"AdaptiveAvgPool2d", aap, []int{2, 3, 1, 2}, adWant},
		} {
			require.Empty(t, c.m.Parameters(), c.name)
			require.Empty(t, c.m.Buffers(), c.name)
			y := c.m.Forward(x)
			require.Equal(t, c.shape, y.Shape(), c.name)
			near(t, c.want, read(t, y), e.tol, c.name)
			backwardSum(t, y)
			require.NotNil(t, x.Grad(), c.name)
			x.ZeroGrad()
			y.Release()
		}
	})
}

func TestBatchNorm(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		bn := NewBatchNorm2d(e.dev, 3)
		defer Release(bn)
		require.Equal(t, []string{"weight", "bias"}, names(bn.Parameters()))
		require.Equal(t, []string{"running_mean", "running_var", "num_batches_tracked"}, names(bn.Buffers()))
		require.Equal(t, []float64{1, 1, 1}, read(t, bn.Weight))
		require.Equal(t, []float64{0, 0, 0}, read(t, bn.Bias))
		require.Equal(t, []float64{0, 0, 0}, read(t, bn.RunningMean))
		require.Equal(t, []float64{1, 1, 1}, read(t, bn.RunningVar))
		require.False(t, bn.RunningMean.RequiresGrad())
		require.Equal(t, 0.1, *bn.Momentum)
		require.Equal(t, []int64{0}, counter(t, bn))
		require.Empty(t, bn.NumBatchesTracked.Shape(), "a scalar, as PyTorch's")
		require.Equal(t, 1e-5, bn.Eps)
		require.True(t, bn.Training())
		randomize(e, bn, 60)
		w, b := read(t, bn.Weight), read(t, bn.Bias)

		const n, c, hw = 2, 3, 4
		xd := randn(61, n*c*hw, 2)
		for i := range xd {
			xd[i] += float64(i % 3) // a mean per channel … roughly
		}
		x := e.constant(xd, n, c, 2, 2)
		defer x.Release()
		mean, biased, unbiased := make([]float64, c), make([]float64, c), make([]float64, c)
		for ch := range c {
			var vals []float64
			for i := range n {
				vals = append(vals, xd[(i*c+ch)*hw:(i*c+ch+1)*hw]...)
			}
			for _, v := range vals {
				mean[ch] += v
			}
			mean[ch] /= float64(len(vals))
			for _, v := range vals {
				biased[ch] += (v - mean[ch]) * (v - mean[ch])
			}
			unbiased[ch] = biased[ch] / float64(len(vals)-1)
			biased[ch] /= float64(len(vals))
		}
		norm := func(m, v []float64) []float64 {
			out := make([]float64, len(xd))
			for i := range out {
				ch := i / hw % c
				out[i] = (xd[i]-m[ch])/math.Sqrt(v[ch]+1e-5)*w[ch] + b[ch]
			}
			return out
		}

		// Training: batch statistics, running statistics updated in place.
		y := bn.Forward(x)
		near(t, norm(mean, biased), read(t, y), e.tol*10)
		wantRM, wantRV := make([]float64, c), make([]float64, c)
		for ch := range c {
			wantRM[ch] = 0.1 * mean[ch]
			wantRV[ch] = 0.9 + 0.1*unbiased[ch]
		}
		near(t, wantRM, read(t, bn.RunningMean), e.tol)
		near(t, wantRV, read(t, bn.RunningVar), e.tol)
		require.Equal(t, []int64{1}, counter(t, bn), "each training forward counts")
		backwardSum(t, y)
		y.Release()
		// Σy = Σ bias … so the weight's gradient is ~0; use a weighted sum.
		require.NotNil(t, bn.Weight.Grad())
		near(t, []float64{float64(n * hw), float64(n * hw), float64(n * hw)}, read(t, bn.Bias.Grad()), e.tol)
		ZeroGrad(bn)
		y = bn.Forward(x)
		sq := y.Square()
		backwardSum(t, sq)
		sq.Release()
		y.Release()
		requireGrads(t, bn)
		ZeroGrad(bn)

		// Evaluation: running statistics, which stay put.
		bn.SetTraining(false)
		require.False(t, bn.Training())
		rm, rv := read(t, bn.RunningMean), read(t, bn.RunningVar)
		y = bn.Forward(x)
		near(t, norm(rm, rv), read(t, y), e.tol*10)
		near(t, rm, read(t, bn.RunningMean), 0)
		require.Equal(t, []int64{2}, counter(t, bn), "evaluation does not count")
		backwardSum(t, y)
		y.Release()
		requireGrads(t, bn)

		// BatchNorm1d: [N, C] and [N, C, L], nothing else.
		bn1 := NewBatchNorm1d(e.dev, 3)
		defer Release(bn1)
		castModule(e, bn1)
		x2 := e.constant(randn(62, 12, 1), 4, 3)
		defer x2.Release()
		y2 := bn1.Forward(x2)
		defer y2.Release()
		require.Equal(t, []int{4, 3}, y2.Shape())
		require.ErrorContains(t, tensor.Catch(func() { bn1.Forward(x) }), "nn.BatchNorm1d: input [2 3 2 2] has rank 4")
		require.ErrorContains(t, tensor.Catch(func() { bn.Forward(x2) }), "nn.BatchNorm2d: input [4 3] has rank 2")
	})
}

func TestLayerNorm(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		ln := NewLayerNorm(e.dev, []int{5})
		defer Release(ln)
		require.Equal(t, []string{"weight", "bias"}, names(ln.Parameters()))
		require.Equal(t, []float64{1, 1, 1, 1, 1}, read(t, ln.Weight))
		require.Equal(t, 1e-5, ln.Eps)
		randomize(e, ln, 70)
		xd := randn(71, 2*3*5, 1.5)
		x := e.constant(xd, 2, 3, 5)
		defer x.Release()
		y := ln.Forward(x)
		near(t, layerNormRef(xd, 5, read(t, ln.Weight), read(t, ln.Bias), 1e-5), read(t, y), e.tol*10)
		sq := y.Square()
		backwardSum(t, sq)
		sq.Release()
		y.Release()
		requireGrads(t, ln)

		ln2 := NewLayerNorm(e.dev, []int{3, 5})
		defer Release(ln2)
		require.Equal(t, []int{3, 5}, ln2.Weight.Shape())
		castModule(e, ln2)
		y2 := ln2.Forward(x)
		defer y2.Release()
		near(t, layerNormRef(xd, 15, make15(1), make15(0), 1e-5), read(t, y2), e.tol*10)
	})
}

func make15(v float64) []float64 {
	out := make([]float64, 15)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestDropout(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, p = 4000, 0.25
		xd := make([]float64, n)
		for i := range xd {
			xd[i] = 1 + float64(i%7)
		}
		x := e.param(xd, n)
		defer x.Release()
		d := NewDropout(p, tensor.NewGenerator(8))
		require.True(t, d.Training())
		require.Empty(t, d.Parameters())
		y := d.Forward(x)
		got := read(t, y)
		zeros := 0
		for i, v := range got {
			if v == 0 {
				zeros++
				continue
			}
			require.InDelta(t, xd[i]/(1-p), v, e.tol*10)
		}
		require.InDelta(t, p, float64(zeros)/n, 0.03)
		backwardSum(t, y)
		y.Release()
		// The gradient is the mask, scaled.
		for i, g := range read(t, x.Grad()) {
			if got[i] == 0 {
				require.Zero(t, g)
			} else {
				require.InDelta(t, 1/(1-p), g, e.tol*10)
			}
		}
		// The same seed replays the mask.
		again := NewDropout(p, tensor.NewGenerator(8)).Forward(x)
		require.Equal(t, got, read(t, again))
		again.Release()

		d.SetTraining(false)
		y = d.Forward(x)
		require.Equal(t, xd, read(t, y))
		y.Release()
		require.ErrorContains(t, tensor.Catch(func() { NewDropout(1.5, nil) }), "outside [0, 1]")
	})
}

func TestEmbedding(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		emb := NewEmbedding(e.dev, 6, 3, tensor.NewGenerator(9))
		defer Release(emb)
		require.Equal(t, []string{"weight"}, names(emb.Parameters()))
		require.Equal(t, []int{6, 3}, emb.Weight.Shape())
		castModule(e, emb)
		w := read(t, emb.Weight)
		idx := e.labels([]int32{5, 0, 2, 2, 5, 5}, 2, 3)
		defer idx.Release()
		y := emb.Forward(idx)
		require.Equal(t, []int{2, 3, 3}, y.Shape())
		var want []float64
		for _, i := range []int{5, 0, 2, 2, 5, 5} {
			want = append(want, w[i*3:i*3+3]...)
		}
		near(t, want, read(t, y), 0)
		backwardSum(t, y)
		y.Release()
		// Each row's gradient counts its uses.
		uses := []float64{1, 0, 2, 0, 0, 3}
		var wantG []float64
		for _, u := range uses {
			wantG = append(wantG, u, u, u)
		}
		near(t, wantG, read(t, emb.Weight.Grad()), e.tol)

		fl := e.constant(make([]float64, 2), 2)
		defer fl.Release()
		require.ErrorContains(t, tensor.Catch(func() { emb.Forward(fl) }), "nn.Embedding: indices must be int32")
	})
}

func TestActivations(t *testing.T) {
	gelu := func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	geluTanh := func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	forEachDevice(t, func(t *testing.T, e env) {
		xd := randn(80, 24, 2)
		x := e.param(xd, 2, 3, 4)
		defer x.Release()
		for _, c := range []struct {
			name string
			m    Module
			f    func(float64) float64
		}{
			{"ReLU", ReLU{}, func(x float64) float64 { return math.Max(x, 0) }},
			{"Tanh", Tanh{}, math.Tanh},
			{"Sigmoid", Sigmoid{}, sigmoid},
			{"GELU", GELU{}, gelu},
			{"GELUTanh", GELU{Approximate: true}, geluTanh},
			{"SiLU", SiLU{}, func(x float64) float64 { return x * sigmoid(x) }},
			{"LeakyReLU", LeakyReLU{Alpha: 0.1}, func(x float64) float64 { return math.Max(x, 0.1*x) }},
		} {
			require.Empty(t, c.m.Parameters())
			require.Empty(t, c.m.Buffers())
			c.m.SetTraining(true)
			require.False(t, c.m.Training())
			y := c.m.Forward(x)
			want := make([]float64, len(xd))
			for i, v := range xd {
				want[i] = c.f(v)
			}
			near(t, want, read(t, y), e.tol*5, c.name)
			backwardSum(t, y)
			require.NotNil(t, x.Grad(), c.name)
			x.ZeroGrad()
			y.Release()
		}

		f := NewFlatten()
		y := f.Forward(x)
		require.Equal(t, []int{2, 12}, y.Shape())
		near(t, xd, read(t, y), 0)
		y.Release()
	})
}

func TestSequential(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		gen := tensor.NewGenerator(12)
		l1, l2 := NewLinear(e.dev, 4, 6, true, gen), NewLinear(e.dev, 6, 2, true, gen)
		bn := NewBatchNorm1d(e.dev, 6)
		s := NewSequential(l1, bn, Tanh{}, NewDropout(0.5, gen), l2)
		defer Release(s)
		randomize(e, s, 90)
		require.Equal(t, []string{"0.weight", "0.bias", "1.weight", "1.bias", "4.weight", "4.bias"}, names(s.Parameters()))
		require.Equal(t, []string{"1.running_mean", "1.running_var", "1.num_batches_tracked"}, names(s.Buffers()))
		require.Equal(t, 4*6+6+12+6*2+2, NumParams(s))

		s.SetTraining(false)
		require.False(t, s.Training())
		require.False(t, bn.Training())
		require.False(t, s.Modules[3].Training())

		xd := randn(91, 5*4, 1)
		x := e.constant(xd, 5, 4)
		defer x.Release()
		y := s.Forward(x)
		h := matmulT(xd, 5, 4, read(t, l1.Weight), 6, read(t, l1.Bias))
		bw, bb := read(t, bn.Weight), read(t, bn.Bias)
		for i := range h {
			h[i] = math.Tanh((h[i]-0)/math.Sqrt(1+1e-5)*bw[i%6] + bb[i%6])
		}
		near(t, matmulT(h, 5, 6, read(t, l2.Weight), 2, read(t, l2.Bias)), read(t, y), e.tol*10)
		backwardSum(t, y)
		y.Release()
		requireGrads(t, s)

		s.SetTraining(true)
		require.True(t, bn.Training())
		empty := NewSequential()
		y = empty.Forward(x)
		require.NotSame(t, x, y)
		y.Release()
		require.Equal(t, xd, read(t, x)) // x is still the caller's
	})
}

// TestForwardReleases: after a forward and backward pass of a model,
// releasing the output and the gradients gives back every byte, so Forward
// releases what it makes.
func TestForwardReleases(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		gen := tensor.NewGenerator(13)
		models := []struct {
			name  string
			m     Module
			input func() *graph.Value
		}{
			{"mlp", NewSequential(NewLinear(e.dev, 4, 8, true, gen), NewBatchNorm1d(e.dev, 8), GELU{},
				NewDropout(0.2, gen), NewLinear(e.dev, 8, 3, true, gen), NewLayerNorm(e.dev, []int{3})),
				func() *graph.Value { return e.constant(randn(100, 24, 1), 6, 4) }},
			{"cnn", NewSequential(NewConv2d(e.dev, 1, 2, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen),
				NewBatchNorm2d(e.dev, 2), ReLU{}, NewMaxPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}}),
				NewAvgPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}}, true), NewAdaptiveAvgPool2d(1, 1), NewFlatten(),
				NewLinear(e.dev, 2, 2, false, gen)),
				func() *graph.Value { return e.constant(randn(101, 2*64, 1), 2, 1, 8, 8) }},
			{"transformer", NewSequential(NewTransformerEncoderBlock(e.dev, 4, 2, 8, 0.1, gen)),
				func() *graph.Value { return e.constant(randn(102, 2*3*4, 1), 2, 3, 4) }},
		}
		for _, c := range models {
			t.Run(c.name, func(t *testing.T) {
				defer Release(c.m)
				castModule(e, c.m)
				quietGC(t, e.dev)
				x := c.input()
				defer x.Release()
				base := e.dev.Stats().LiveBytes
				for range 2 {
					y := c.m.Forward(x)
					sq := y.Square()
					loss := sq.Mean(nil, false)
					require.NoError(t, graph.Backward(loss))
					y.Release()
					sq.Release()
					loss.Release()
					ZeroGrad(c.m)
					require.Equal(t, base, e.dev.Stats().LiveBytes)
				}
				c.m.SetTraining(false)
				eval := graph.NewScope(graph.NoGrad)
				require.False(t, c.m.Forward(eval.Use(x.Detach())).RequiresGrad())
				eval.Close()
				require.Equal(t, base, e.dev.Stats().LiveBytes)
				c.m.SetTraining(true)
			})
		}
	})
}
