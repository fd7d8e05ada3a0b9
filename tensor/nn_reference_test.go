package tensor

// Float64 references for the NN ops, written as the textbook loops (direct
// convolution, window scans) rather than the im2col/matmul route the ops
// take, so that a shared mistake cannot hide. Each returns the expected
// values and, where the result is a sum, the sum of the absolute terms
// ("magnitude"), which scales the float32 tolerance.

import (
	"math"
)

// nnTolerance is the one place the NN tests state their tolerances, for
// float32 results on every device (float64 results, CPU only, get
// float64Relative instead).
//
//   - sumRelative: a float32 result that sums K products carries a rounding
//     error of about √K·2⁻²⁴·Σ|terms| typically (K·2⁻²⁴·Σ|terms| at worst),
//     and kernels may reorder or fuse the sums. K stays below a few hundred
//     here, so 2⁻¹⁷·Σ|terms| (≈ 7.6e-6) bounds it with a wide margin while
//     any indexing mistake, O(|term|), still fails. Convolutions.
//   - relative, absolute: short chains of elementwise ops and reductions over
//     at most a few hundred elements (softmax, normalization, pooling
//     averages, affine grids). WGSL allows exp and log errors of a few ulp
//     (exp: 3 + 2·|x| ulp), hence a few 2⁻²⁴ relative plus a floor near 0.
//   - sample: grid_sample sums four weighted inputs in [−1, 1] whose
//     weights come from unnormalized coordinates; absolute.
//   - rbfDistance: RBFKernel's squared distances come from
//     ‖x‖² + ‖y‖² − 2x·y, whose rounding is ~2⁻²³·(‖x‖² + ‖y‖²) ≤ 2⁻²³·2d
//     for inputs in [−1, 1]; the kernel's error is that times γ·K ≤ γ, so
//     the tolerance is rbfDistance·γ·d on top of relative/absolute.
//   - adjoint: ⟨conv x, y⟩ against ⟨x, convT y⟩, relative to Σ|terms| of the
//     first; both sides carry the convolutions' rounding.
//   - scale: one float32 multiply by 1/(1−p), which WGSL may compute with
//     a division good to 2.5 ulp; relative.
//   - offsetRows: LayerNorm of rows ≈ 1000 ± 1, whose float32 mean is
//     rounded at 1000·2⁻²⁴ ≈ 6e-5 against a spread of ~0.6; absolute.
//   - float16Relative, float16Absolute: float16 results on the CPU backend,
//     computed in float32 and rounded to float16 (2⁻¹¹ relative) at each of
//     a few steps; relative to |want| + Σ|terms|.
var nnTolerance = struct {
	sumRelative     float64
	relative        float64
	absolute        float64
	sample          float64
	rbfDistance     float64
	adjoint         float64
	scale           float64
	offsetRows      float64
	float16Relative float64
	float16Absolute float64
	float64Relative float64
}{
	sumRelative:     1.0 / (1 << 17),
	relative:        4e-6,
	absolute:        4e-6,
	sample:          4e-6,
	rbfDistance:     8e-6,
	adjoint:         1e-5,
	scale:           4e-7,
	offsetRows:      1e-3,
	float16Relative: 2e-3,
	float16Absolute: 1e-3,
	float64Relative: 1e-12,
}

// nnSumTol is the tolerance for a float32 result that is a sum of products
// with magnitude mag[i] (the sum of their absolute values).
func nnSumTol(want, mag []float64) func(int) float64 {
	return func(i int) float64 {
		return nnTolerance.sumRelative*mag[i] + nnTolerance.relative*math.Abs(want[i]) + nnTolerance.absolute
	}
}

// nnValueTol is the tolerance for a float32 result of a short chain of
// elementwise ops and reductions.
func nnValueTol(want []float64) func(int) float64 {
	return func(i int) float64 {
		return nnTolerance.relative*math.Abs(want[i]) + nnTolerance.absolute
	}
}

// nnFloat64Tol is the tolerance for float64 results of any op; mag (may
// be nil) is the magnitude of a sum's terms.
func nnFloat64Tol(want, mag []float64) func(int) float64 {
	return func(i int) float64 {
		m := math.Abs(want[i])
		if mag != nil {
			m += mag[i]
		}
		return nnTolerance.float64Relative * (m + 1)
	}
}

// conv2dGeometry describes one convolution test case, NCHW.
type conv2dGeometry struct {
	N, Cin, H, W     int
	Cout, KH, KW     int
	Stride, Padding  [2]int
	Dilation         [2]int
	OutputPadding    [2]int // transposed convolution only
	Groups           int
	Bias             bool
	transposedWeight bool // weight is [Cin, Cout/G, KH, KW]
}

func (g conv2dGeometry) inputShape() []int { return []int{g.N, g.Cin, g.H, g.W} }

func (g conv2dGeometry) weightShape() []int {
	if g.transposedWeight {
		return []int{g.Cin, g.Cout / g.Groups, g.KH, g.KW}
	}
	return []int{g.Cout, g.Cin / g.Groups, g.KH, g.KW}
}

// convOutSize is the forward convolution's output size along one axis.
func convOutSize(in, k, s, p, d int) int { return (in+2*p-d*(k-1)-1)/s + 1 }

// refConv2d is the direct convolution (cross-correlation, as PyTorch):
// out[n, co, oy, ox] = b[co] + Σ x[n, g·Cin/G + ci, oy·s−p+ky·d, ox·s−p+kx·d]·w[co, ci, ky, kx].
func refConv2d(x, w, b []float64, g conv2dGeometry) (out, mag []float64, oh, ow int) {
	oh = convOutSize(g.H, g.KH, g.Stride[0], g.Padding[0], g.Dilation[0])
	ow = convOutSize(g.W, g.KW, g.Stride[1], g.Padding[1], g.Dilation[1])
	cinG, coutG := g.Cin/g.Groups, g.Cout/g.Groups
	out = make([]float64, g.N*g.Cout*oh*ow)
	mag = make([]float64, len(out))
	for n := range g.N {
		for co := range g.Cout {
			group := co / coutG
			for oy := range oh {
				for ox := range ow {
					var s, m float64
					if b != nil {
						s, m = b[co], math.Abs(b[co])
					}
					for ci := range cinG {
						c := group*cinG + ci
						for ky := range g.KH {
							iy := oy*g.Stride[0] - g.Padding[0] + ky*g.Dilation[0]
							if iy < 0 || iy >= g.H {
								continue
							}
							for kx := range g.KW {
								ix := ox*g.Stride[1] - g.Padding[1] + kx*g.Dilation[1]
								if ix < 0 || ix >= g.W {
									continue
								}
								term := x[((n*g.Cin+c)*g.H+iy)*g.W+ix] * w[((co*cinG+ci)*g.KH+ky)*g.KW+kx]
								s += term
								m += math.Abs(term)
							}
						}
					}
					i := ((n*g.Cout+co)*oh+oy)*ow + ox
					out[i], mag[i] = s, m
				}
			}
		}
	}
	return out, mag, oh, ow
}

// refConvTranspose2d scatters every input pixel through the kernel, the
// definition of the transposed convolution (the adjoint of refConv2d):
// out[n, g·Cout/G + co, iy·s−p+ky·d, ix·s−p+kx·d] += x[n, g·Cin/G + ci, iy, ix]·w[g·Cin/G + ci, co, ky, kx].
func refConvTranspose2d(x, w, b []float64, g conv2dGeometry) (out, mag []float64, oh, ow int) {
	oh = (g.H-1)*g.Stride[0] - 2*g.Padding[0] + g.Dilation[0]*(g.KH-1) + g.OutputPadding[0] + 1
	ow = (g.W-1)*g.Stride[1] - 2*g.Padding[1] + g.Dilation[1]*(g.KW-1) + g.OutputPadding[1] + 1
	cinG, coutG := g.Cin/g.Groups, g.Cout/g.Groups
	out = make([]float64, g.N*g.Cout*oh*ow)
	mag = make([]float64, len(out))
	for n := range g.N {
		for c := range g.Cin {
			group := c / cinG
			for iy := range g.H {
				for ix := range g.W {
					xv := x[((n*g.Cin+c)*g.H+iy)*g.W+ix]
					for co := range coutG {
						oc := group*coutG + co
						for ky := range g.KH {
							oy := iy*g.Stride[0] - g.Padding[0] + ky*g.Dilation[0]
							if oy < 0 || oy >= oh {
								continue
							}
							for kx := range g.KW {
								ox := ix*g.Stride[1] - g.Padding[1] + kx*g.Dilation[1]
								if ox < 0 || ox >= ow {
									continue
								}
								term := xv * w[((c*coutG+co)*g.KH+ky)*g.KW+kx]
								i := ((n*g.Cout+oc)*oh+oy)*ow + ox
								out[i] += term
								mag[i] += math.Abs(term)
							}
						}
					}
				}
			}
		}
	}
	if b != nil {
		for n := range g.N {
			for co := range g.Cout {
				for j := range oh * ow {
					i := (n*g.Cout+co)*oh*ow + j
					out[i] += b[co]
					mag[i] += math.Abs(b[co])
				}
			}
		}
	}
	return out, mag, oh, ow
}

// poolGeometry describes one pooling test case.
type poolGeometry struct {
	N, C, H, W int
	Opts       PoolOptions
}

// poolParams resolves PoolOptions' zero values as the ops document:
// stride defaults to the kernel, dilation to 1.
func poolParams(o PoolOptions) (k, s, p, d [2]int) {
	k, s, p, d = o.Kernel, o.Stride, o.Padding, o.Dilation
	for i := range 2 {
		if s[i] == 0 {
			s[i] = k[i]
		}
		if d[i] == 0 {
			d[i] = 1
		}
	}
	return k, s, p, d
}

// refPoolOutSize is PyTorch's pooling_output_shape, written out
// independently of hal.OutputSize.
func refPoolOutSize(in, k, s, p, d int, ceil bool) int {
	num := in + 2*p - d*(k-1) - 1
	var out int
	if ceil {
		out = int(math.Ceil(float64(num)/float64(s))) + 1
		// The last window must start inside the input or its left padding.
		if (out-1)*s >= in+p {
			out--
		}
	} else {
		out = num/s + 1
	}
	return out
}

// refMaxPool2d scans each window in row-major order; the first maximum
// wins, as PyTorch's CPU kernel. Indices are h·W + w in the input plane.
func refMaxPool2d(x []float64, g poolGeometry) (out []float64, idx []int32, oh, ow int) {
	k, s, p, d := poolParams(g.Opts)
	oh = refPoolOutSize(g.H, k[0], s[0], p[0], d[0], g.Opts.CeilMode)
	ow = refPoolOutSize(g.W, k[1], s[1], p[1], d[1], g.Opts.CeilMode)
	out = make([]float64, g.N*g.C*oh*ow)
	idx = make([]int32, len(out))
	for nc := range g.N * g.C {
		plane := x[nc*g.H*g.W:]
		for oy := range oh {
			for ox := range ow {
				best, bestIdx := math.Inf(-1), -1
				for ky := range k[0] {
					iy := oy*s[0] - p[0] + ky*d[0]
					if iy < 0 || iy >= g.H {
						continue
					}
					for kx := range k[1] {
						ix := ox*s[1] - p[1] + kx*d[1]
						if ix < 0 || ix >= g.W {
							continue
						}
						if v := plane[iy*g.W+ix]; v > best || bestIdx < 0 {
							best, bestIdx = v, iy*g.W+ix
						}
					}
				}
				i := (nc*oh+oy)*ow + ox
				out[i], idx[i] = best, int32(bestIdx)
			}
		}
	}
	return out, idx, oh, ow
}

// refAvgPool2d follows PyTorch's avg_pool2d: the window is clipped to the
// padded input for the divisor when countIncludePad, and to the input
// itself otherwise; the sum only ever sees input elements.
func refAvgPool2d(x []float64, g poolGeometry, countIncludePad bool) (out []float64, oh, ow int) {
	k, s, p, _ := poolParams(g.Opts)
	oh = refPoolOutSize(g.H, k[0], s[0], p[0], 1, g.Opts.CeilMode)
	ow = refPoolOutSize(g.W, k[1], s[1], p[1], 1, g.Opts.CeilMode)
	out = make([]float64, g.N*g.C*oh*ow)
	for nc := range g.N * g.C {
		plane := x[nc*g.H*g.W:]
		for oy := range oh {
			for ox := range ow {
				y0, x0 := oy*s[0]-p[0], ox*s[1]-p[1]
				y1, x1 := min(y0+k[0], g.H+p[0]), min(x0+k[1], g.W+p[1])
				padded := (y1 - y0) * (x1 - x0)
				y0, x0, y1, x1 = max(y0, 0), max(x0, 0), min(y1, g.H), min(x1, g.W)
				var sum float64
				for iy := y0; iy < y1; iy++ {
					for ix := x0; ix < x1; ix++ {
						sum += plane[iy*g.W+ix]
					}
				}
				div := padded
				if !countIncludePad {
					div = (y1 - y0) * (x1 - x0)
				}
				out[(nc*oh+oy)*ow+ox] = sum / float64(div)
			}
		}
	}
	return out, oh, ow
}

// refSoftmax computes softmax (or log-softmax) of x, shaped shape, along
// axis, in float64 with the max subtracted.
func refSoftmax(x []float64, shape []int, axis int, logarithm bool) []float64 {
	outer, inner := 1, 1
	for i, d := range shape {
		switch {
		case i < axis:
			outer *= d
		case i > axis:
			inner *= d
		}
	}
	n := shape[axis]
	out := make([]float64, len(x))
	for o := range outer {
		for in := range inner {
			at := func(j int) int { return (o*n+j)*inner + in }
			m := math.Inf(-1)
			for j := range n {
				m = math.Max(m, x[at(j)])
			}
			var sum float64
			for j := range n {
				sum += math.Exp(x[at(j)] - m)
			}
			lse := m + math.Log(sum)
			for j := range n {
				if logarithm {
					out[at(j)] = x[at(j)] - lse
				} else {
					out[at(j)] = math.Exp(x[at(j)] - lse)
				}
			}
		}
	}
	return out
}

// refBatchNorm normalizes x [N, C, rest…] per channel. With training it
// uses the batch's biased variance and returns the updated running stats
// (unbiased variance); otherwise it uses the given running stats.
func refBatchNorm(x []float64, shape []int, runMean, runVar, weight, bias []float64, training bool, momentum, eps float64) (out, newMean, newVar []float64) {
	n, c := shape[0], shape[1]
	inner := 1
	for _, d := range shape[2:] {
		inner *= d
	}
	count := n * inner
	mean := make([]float64, c)
	variance := make([]float64, c)
	newMean = append([]float64(nil), runMean...)
	newVar = append([]float64(nil), runVar...)
	for ch := range c {
		if !training {
			mean[ch], variance[ch] = runMean[ch], runVar[ch]
			continue
		}
		var sum float64
		for b := range n {
			for j := range inner {
				sum += x[(b*c+ch)*inner+j]
			}
		}
		mu := sum / float64(count)
		var sq float64
		for b := range n {
			for j := range inner {
				dv := x[(b*c+ch)*inner+j] - mu
				sq += dv * dv
			}
		}
		mean[ch], variance[ch] = mu, sq/float64(count)
		if newMean != nil {
			newMean[ch] = (1-momentum)*newMean[ch] + momentum*mu
		}
		if newVar != nil {
			newVar[ch] = (1-momentum)*newVar[ch] + momentum*sq/float64(count-1)
		}
	}
	out = make([]float64, len(x))
	for b := range n {
		for ch := range c {
			scale, shift := 1.0, 0.0
			if weight != nil {
				scale = weight[ch]
			}
			if bias != nil {
				shift = bias[ch]
			}
			for j := range inner {
				i := (b*c+ch)*inner + j
				out[i] = (x[i]-mean[ch])/math.Sqrt(variance[ch]+eps)*scale + shift
			}
		}
	}
	return out, newMean, newVar
}

// refLayerNorm normalizes each group of the trailing `size` elements of x
// with the biased variance, then applies the elementwise affine weight and
// bias (each `size` long, or nil).
func refLayerNorm(x []float64, size int, weight, bias []float64, eps float64) []float64 {
	out := make([]float64, len(x))
	for start := 0; start < len(x); start += size {
		row := x[start : start+size]
		var sum float64
		for _, v := range row {
			sum += v
		}
		mu := sum / float64(size)
		var sq float64
		for _, v := range row {
			sq += (v - mu) * (v - mu)
		}
		inv := 1 / math.Sqrt(sq/float64(size)+eps)
		for j, v := range row {
			y := (v - mu) * inv
			if weight != nil {
				y *= weight[j]
			}
			if bias != nil {
				y += bias[j]
			}
			out[start+j] = y
		}
	}
	return out
}

// refRBFKernel computes exp(−γ·‖x_i − y_j‖²) by the direct difference.
func refRBFKernel(x, y []float64, n, m, d int, gamma float64) []float64 {
	out := make([]float64, n*m)
	for i := range n {
		for j := range m {
			var sq float64
			for k := range d {
				diff := x[i*d+k] - y[j*d+k]
				sq += diff * diff
			}
			out[i*m+j] = math.Exp(-gamma * sq)
		}
	}
	return out
}

// refLinspaceNorm is the normalized coordinate of pixel i of n, as
// affine_grid lays out its base grid.
func refLinspaceNorm(i, n int, alignCorners bool) float64 {
	if n <= 1 {
		return 0
	}
	v := -1 + 2*float64(i)/float64(n-1)
	if !alignCorners {
		v *= float64(n-1) / float64(n)
	}
	return v
}

// refAffineGrid returns [N, H, W, 2]: grid[n, h, w] = θ[n]·(x_w, y_h, 1).
func refAffineGrid(theta []float64, n, h, w int, alignCorners bool) []float64 {
	out := make([]float64, n*h*w*2)
	for b := range n {
		t := theta[b*6:]
		for i := range h {
			y := refLinspaceNorm(i, h, alignCorners)
			for j := range w {
				x := refLinspaceNorm(j, w, alignCorners)
				o := ((b*h+i)*w + j) * 2
				out[o] = t[0]*x + t[1]*y + t[2]
				out[o+1] = t[3]*x + t[4]*y + t[5]
			}
		}
	}
	return out
}

// refGridSample is bilinear grid_sample with zeros or border padding, as
// PyTorch's grid_sampler_2d: unnormalize, clip for border, then weight
// the four neighbours, reading 0 outside the input.
func refGridSample(x []float64, n, c, h, w int, grid []float64, oh, ow int, border, alignCorners bool) []float64 {
	unnormalize := func(coord float64, size int) float64 {
		if alignCorners {
			return (coord + 1) / 2 * float64(size-1)
		}
		return ((coord+1)*float64(size) - 1) / 2
	}
	clip := func(v float64, size int) float64 { return math.Min(float64(size-1), math.Max(v, 0)) }
	out := make([]float64, n*c*oh*ow)
	for b := range n {
		for i := range oh {
			for j := range ow {
				g := grid[((b*oh+i)*ow+j)*2:]
				ix, iy := unnormalize(g[0], w), unnormalize(g[1], h)
				if border {
					ix, iy = clip(ix, w), clip(iy, h)
				}
				x0, y0 := math.Floor(ix), math.Floor(iy)
				fx, fy := ix-x0, iy-y0
				for ch := range c {
					plane := x[(b*c+ch)*h*w:]
					at := func(yy, xx float64) float64 {
						if yy < 0 || yy >= float64(h) || xx < 0 || xx >= float64(w) {
							return 0
						}
						return plane[int(yy)*w+int(xx)]
					}
					v := at(y0, x0)*(1-fx)*(1-fy) + at(y0, x0+1)*fx*(1-fy) +
						at(y0+1, x0)*(1-fx)*fy + at(y0+1, x0+1)*fx*fy
					out[((b*c+ch)*oh+i)*ow+j] = v
				}
			}
		}
	}
	return out
}

// nnFloat64s widens float32 test inputs for the references.
func nnFloat64s(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, v := range xs {
		out[i] = float64(v)
	}
	return out
}
