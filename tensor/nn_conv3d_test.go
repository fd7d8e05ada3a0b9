package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	opRunners["Conv3d"] = func(in *opInputs) *Tensor {
		return Conv3d(in.x(2, 4, 5, 4, 3), in.x(6, 2, 3, 2, 2), in.x(6),
			Conv3dOptions{Stride: [3]int{2, 1, 1}, Padding: [3]int{1, 1, 0}, Groups: 2})
	}
}

// conv3dGeometry is one Conv3d case: input [N, Cin, D, H, W], weight
// [Cout, Cin/Groups, KD, KH, KW] and the options, resolved by resolved.
type conv3dGeometry struct {
	N, Cin, D, H, W, Cout, KD, KH, KW int
	Stride, Padding, Dilation         [3]int
	Groups                            int
	Bias                              bool
}

func (g conv3dGeometry) resolved() conv3dGeometry {
	for i := range 3 {
		g.Stride[i], g.Dilation[i] = zeroIsOne(g.Stride[i]), zeroIsOne(g.Dilation[i])
	}
	g.Groups = zeroIsOne(g.Groups)
	return g
}

func (g conv3dGeometry) options() Conv3dOptions {
	return Conv3dOptions{Stride: g.Stride, Padding: g.Padding, Dilation: g.Dilation, Groups: g.Groups}
}

func (g conv3dGeometry) outSize(axis, in, k int) int {
	return (in+2*g.Padding[axis]-g.Dilation[axis]*(k-1)-1)/g.Stride[axis] + 1
}

// refConv3d is the 3-D convolution in float64 by its definition, with
// the magnitude of each output's terms (for the summation tolerance).
func refConv3d(x, w, b []float64, g conv3dGeometry) (out, mag []float64, shape []int) {
	od, oh, ow := g.outSize(0, g.D, g.KD), g.outSize(1, g.H, g.KH), g.outSize(2, g.W, g.KW)
	cinG, coutG := g.Cin/g.Groups, g.Cout/g.Groups
	shape = []int{g.N, g.Cout, od, oh, ow}
	out = make([]float64, g.N*g.Cout*od*oh*ow)
	mag = make([]float64, len(out))
	i := 0
	for n := range g.N {
		for co := range g.Cout {
			grp := co / coutG
			for z := range od {
				for y := range oh {
					for xo := range ow {
						var s, m float64
						if b != nil {
							s, m = b[co], math.Abs(b[co])
						}
						for ci := range cinG {
							c := grp*cinG + ci
							for kz := range g.KD {
								iz := z*g.Stride[0] - g.Padding[0] + kz*g.Dilation[0]
								if iz < 0 || iz >= g.D {
									continue
								}
								for ky := range g.KH {
									iy := y*g.Stride[1] - g.Padding[1] + ky*g.Dilation[1]
									if iy < 0 || iy >= g.H {
										continue
									}
									for kx := range g.KW {
										ix := xo*g.Stride[2] - g.Padding[2] + kx*g.Dilation[2]
										if ix < 0 || ix >= g.W {
											continue
										}
										term := x[(((n*g.Cin+c)*g.D+iz)*g.H+iy)*g.W+ix] *
											w[(((co*cinG+ci)*g.KD+kz)*g.KH+ky)*g.KW+kx]
										s += term
										m += math.Abs(term)
									}
								}
							}
						}
						out[i], mag[i] = s, m
						i++
					}
				}
			}
		}
	}
	return out, mag, shape
}

// conv3dCases cover depth stride, padding and dilation alone and with
// the spatial ones, groups, depthwise, a kernel as deep as the input and
// a 1×1×1 kernel, at odd sizes; they stay small for llvmpipe.
var conv3dCases = []struct {
	name string
	g    conv3dGeometry
}{
	{"plain", conv3dGeometry{N: 2, Cin: 3, D: 5, H: 6, W: 7, Cout: 4, KD: 3, KH: 3, KW: 3, Bias: true}},
	{"depth stride pad", conv3dGeometry{N: 1, Cin: 2, D: 7, H: 5, W: 4, Cout: 3, KD: 3, KH: 2, KW: 3,
		Stride: [3]int{2, 1, 1}, Padding: [3]int{1, 0, 1}, Bias: true}},
	{"dilation", conv3dGeometry{N: 2, Cin: 2, D: 9, H: 7, W: 6, Cout: 3, KD: 2, KH: 3, KW: 2,
		Padding: [3]int{2, 1, 0}, Dilation: [3]int{3, 2, 1}}},
	{"groups2", conv3dGeometry{N: 2, Cin: 4, D: 5, H: 5, W: 6, Cout: 6, KD: 3, KH: 3, KW: 3,
		Stride: [3]int{2, 2, 1}, Padding: [3]int{1, 1, 1}, Groups: 2, Bias: true}},
	{"depthwise", conv3dGeometry{N: 1, Cin: 3, D: 4, H: 5, W: 3, Cout: 3, KD: 2, KH: 3, KW: 1,
		Padding: [3]int{1, 1, 0}, Groups: 3, Bias: true}},
	{"kernel covers depth", conv3dGeometry{N: 3, Cin: 2, D: 3, H: 4, W: 5, Cout: 2, KD: 3, KH: 2, KW: 2, Bias: true}},
	{"1x1x1", conv3dGeometry{N: 2, Cin: 5, D: 3, H: 4, W: 3, Cout: 2, KD: 1, KH: 1, KW: 1}},
	{"1x1x1 groups bias", conv3dGeometry{N: 1, Cin: 4, D: 2, H: 3, W: 5, Cout: 6, KD: 1, KH: 1, KW: 1, Groups: 2, Bias: true}},
	{"1x1x1 strided padded", conv3dGeometry{N: 2, Cin: 3, D: 5, H: 4, W: 3, Cout: 2, KD: 1, KH: 1, KW: 1,
		Stride: [3]int{2, 1, 2}, Padding: [3]int{1, 0, 0}, Bias: true}},
	{"everything", conv3dGeometry{N: 2, Cin: 4, D: 8, H: 7, W: 9, Cout: 4, KD: 3, KH: 2, KW: 3,
		Stride: [3]int{3, 2, 2}, Padding: [3]int{2, 1, 0}, Dilation: [3]int{2, 1, 2}, Groups: 2, Bias: true}},
}

// TestConv3d compares Conv3d with the float64 definition on every device,
// in both compositions (EnvConv3d).
func TestConv3d(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, variant := range []Conv3dVariant{Conv3dStack, Conv3dTaps} {
			t.Run(string(variant), func(t *testing.T) {
				t.Setenv(EnvConv3d, string(variant))
				for _, tc := range conv3dCases {
					t.Run(tc.name, func(t *testing.T) {
						g := tc.g.resolved()
						rng := nnRand(t)
						x, xs := nnInput(t, dev, rng, g.N, g.Cin, g.D, g.H, g.W)
						w, ws := nnInput(t, dev, rng, g.Cout, g.Cin/g.Groups, g.KD, g.KH, g.KW)
						var b *Tensor
						var bs []float64
						if g.Bias {
							b, bs = nnInput(t, dev, rng, g.Cout)
						}
						want, mag, shape := refConv3d(xs, ws, bs, g)
						require.Equal(t, variant, g.options().Plan(x, w, b).Variant)
						y := Conv3d(x, w, b, tc.g.options())
						require.Equal(t, shape, y.Shape())
						nnRequireClose(t, tc.name, want, nnRead(t, y), nnSumTol(want, mag))
					})
				}
			})
		}
	})
}

// TestConv3dUnbatchedAndViews runs an unbatched input and a
// non-contiguous one (a transposed view), whose results must not depend
// on the layout.
func TestConv3dUnbatchedAndViews(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		g := conv3dGeometry{N: 1, Cin: 2, D: 4, H: 5, W: 3, Cout: 3, KD: 2, KH: 3, KW: 2,
			Padding: [3]int{1, 1, 0}, Bias: true}.resolved()
		rng := nnRand(t)
		x, xs := nnInput(t, dev, rng, g.Cin, g.D, g.H, g.W)
		w, ws := nnInput(t, dev, rng, g.Cout, g.Cin, g.KD, g.KH, g.KW)
		b, bs := nnInput(t, dev, rng, g.Cout)
		want, mag, shape := refConv3d(xs, ws, bs, g)
		y := Conv3d(x, w, b, g.options())
		require.Equal(t, shape[1:], y.Shape())
		nnRequireClose(t, "unbatched", want, nnRead(t, y), nnSumTol(want, mag))

		// Stored as [N, C, W, H, D]; the view is [N, C, D, H, W].
		stored, ss := nnInput(t, dev, rng, 1, g.Cin, g.W, g.H, g.D)
		view := stored.Permute(0, 1, 4, 3, 2)
		defer view.Release()
		require.False(t, view.IsContiguous())
		vs := make([]float64, len(ss))
		for c := range g.Cin {
			for z := range g.D {
				for yy := range g.H {
					for xx := range g.W {
						vs[((c*g.D+z)*g.H+yy)*g.W+xx] = ss[((c*g.W+xx)*g.H+yy)*g.D+z]
					}
				}
			}
		}
		want, mag, _ = refConv3d(vs, ws, nil, g)
		nnRequireClose(t, "permuted input", want, nnRead(t, Conv3d(view, w, nil, g.options())), nnSumTol(want, mag))
	})
}

// TestConv3dFloat64 runs the CPU's float64 path with a float64
// tolerance.
func TestConv3dFloat64(t *testing.T) {
	dev := openCPU(t)
	g := conv3dGeometry{N: 2, Cin: 4, D: 6, H: 5, W: 4, Cout: 2, KD: 3, KH: 2, KW: 3, Stride: [3]int{2, 1, 1},
		Padding: [3]int{1, 1, 1}, Dilation: [3]int{1, 2, 1}, Groups: 2, Bias: true}.resolved()
	rng := nnRand(t)
	in := func(n int) (*Tensor, []float64) {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		x := FromFloat64(dev, v, n)
		t.Cleanup(x.Release)
		return x, v
	}
	xf, xs := in(g.N * g.Cin * g.D * g.H * g.W)
	wf, ws := in(g.Cout * g.Cin / g.Groups * g.KD * g.KH * g.KW)
	b, bs := in(g.Cout)
	x := xf.Reshape(g.N, g.Cin, g.D, g.H, g.W)
	defer x.Release()
	w := wf.Reshape(g.Cout, g.Cin/g.Groups, g.KD, g.KH, g.KW)
	defer w.Release()
	want, mag, _ := refConv3d(xs, ws, bs, g)
	y := Conv3d(x, w, b, g.options())
	defer y.Release()
	require.Equal(t, Float64, y.DType())
	got, err := y.Float64s()
	require.NoError(t, err)
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-12*(mag[i]+1), "element %d", i)
	}
}

// TestConv3dEmpty: an empty batch gives an empty result, an empty
// spatial input with padding gives the bias alone.
func TestConv3dEmpty(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		y := Conv3d(Zeros(dev, 0, 2, 3, 3, 3), Ones(dev, 4, 2, 2, 2, 2), Ones(dev, 4), Conv3dOptions{})
		require.Equal(t, []int{0, 4, 2, 2, 2}, y.Shape())
		y.Release()
		y = Conv3d(Zeros(dev, 1, 2, 3, 0, 3), Ones(dev, 4, 2, 1, 1, 1), FromFloat32(dev, []float32{1, 2, 3, 4}, 4),
			Conv3dOptions{Padding: [3]int{0, 1, 0}})
		require.Equal(t, []int{1, 4, 3, 2, 3}, y.Shape())
		got := nnRead(t, y)
		for i, v := range got {
			require.Equal(t, float32(i/18+1), v, "element %d", i)
		}
	})
}

// TestConv3dMisuse checks Conv3d's errors: typed, naming the op, the
// shapes, dtypes and what was expected.
func TestConv3dMisuse(t *testing.T) {
	dev := openCPU(t)
	other := openSecondCPU(t)
	var all nnScope
	defer all.release()
	zeros := func(shape ...int) *Tensor { return all.add(Zeros(dev, shape...)) }
	x := zeros(2, 3, 4, 5, 5)
	w := zeros(4, 3, 3, 3, 3)
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"input rank", func() { Conv3d(zeros(3, 5, 5), w, nil, Conv3dOptions{}) },
			"tensor: Conv3d: input [3 5 5] float32 must be 4-D [C, D, H, W] or 5-D [N, C, D, H, W]"},
		{"weight rank", func() { Conv3d(x, zeros(4, 3, 3, 3), nil, Conv3dOptions{}) },
			"tensor: Conv3d: weight [4 3 3 3] float32 must be 5-D [Cout, Cin/groups, KD, KH, KW]"},
		{"channels", func() { Conv3d(x, zeros(4, 2, 3, 3, 3), nil, Conv3dOptions{}) },
			"tensor: Conv3d: input [2 3 4 5 5] float32 has 3 channels, but weight [4 2 3 3 3] float32 with groups 1 expects 2·1 = 2"},
		{"groups", func() { Conv3d(zeros(1, 4, 4, 5, 5), zeros(3, 2, 3, 3, 3), nil, Conv3dOptions{Groups: 2}) },
			"tensor: Conv3d: weight [3 2 3 3 3] float32 has 3 output channels, not divisible by groups 2"},
		{"kernel too deep", func() { Conv3d(x, w, nil, Conv3dOptions{Dilation: [3]int{2, 1, 1}}) },
			"tensor: Conv3d: kernel [3 3 3] (dilation [2 1 1]) spans 5 along depth, more than the padded input [2 3 4 5 5] float32 (padding [0 0 0])"},
		{"bias", func() { Conv3d(x, w, zeros(3), Conv3dOptions{}) },
			"tensor: Conv3d: bias [3] float32 must be [4], one per output channel"},
		{"stride", func() { Conv3d(x, w, nil, Conv3dOptions{Stride: [3]int{1, -1, 1}}) },
			"tensor: Conv3d: stride [1 -1 1] must be positive"},
		{"padding", func() { Conv3d(x, w, nil, Conv3dOptions{Padding: [3]int{-1, 0, 0}}) },
			"tensor: Conv3d: padding [-1 0 0] must not be negative"},
		{"dtypes", func() { Conv3d(all.add(Full(dev, Float64, 0, 2, 3, 4, 5, 5)), w, nil, Conv3dOptions{}) },
			"tensor: Conv3d: input [2 3 4 5 5] float64 and weight [4 3 3 3 3] float32 have different dtypes"},
		{"empty kernel", func() { Conv3d(x, zeros(4, 3, 0, 3, 3), nil, Conv3dOptions{}) },
			"tensor: Conv3d: weight [4 3 0 3 3] float32 has an empty kernel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, nnErrorText(t, tc.f))
		})
	}
	t.Run("int input", func(t *testing.T) {
		msg := nnErrorText(t, func() { Conv3d(all.add(Full(dev, Int32, 0, 2, 3, 4, 5, 5)), w, nil, Conv3dOptions{}) })
		assert.Contains(t, msg, "unsupported operation: Conv3d is not defined for int32")
	})
	t.Run("devices", func(t *testing.T) {
		msg := nnErrorText(t, func() { Conv3d(x, all.add(Zeros(other, 4, 3, 3, 3, 3)), nil, Conv3dOptions{}) })
		assert.Contains(t, msg, "Conv3d")
	})
}
