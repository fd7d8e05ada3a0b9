package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// cube is x³ with its gradient 3x²·g written with graph operations on the
// saved input, so that it is differentiable again.
var cube = &Function{
	Name:       "Cube",
	SaveInputs: true,
	Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
		sq := in[0].Square()
		defer sq.Release()
		return sq.Mul(in[0]), nil
	},
	Backward: func(c *Context, g *Value) []*Value {
		x := c.Input(0)
		return []*Value{Mul(Mul(x, x).MulScalar(3), g)}
	},
}

// expScale is exp(x)·y + k: three inputs, a tensor saved by Forward
// (exp(x)), an input read back (y) and one that never needs a gradient (k,
// whose gradient Backward leaves nil).
var expScale = &Function{
	Name:       "ExpScale",
	SaveInputs: true,
	Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
		e := in[0].Exp()
		p := e.Mul(in[1])
		defer p.Release()
		return p.Add(in[2]), []*tensor.Tensor{e}
	},
	Backward: func(c *Context, g *Value) []*Value {
		e := c.Saved(0)
		var gx, gy *Value
		if c.NeedsGrad(0) {
			gx = Mul(Mul(g, e), c.Input(1))
		}
		if c.NeedsGrad(1) {
			gy = Mul(g, e)
		}
		return []*Value{gx, gy, nil}
	},
}

func randomValues(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.Float64()*2 - 1
	}
	return out
}

// TestFunctionGradCheck: the custom functions pass GradCheck, the cube to
// second order (its Backward is built from graph operations).
func TestFunctionGradCheck(t *testing.T) {
	dev := cpuDevice(t)
	rng := rand.New(rand.NewPCG(16, 3))
	x := Param(tensor.FromFloat64(dev, randomValues(rng, 2*3), 2, 3))
	defer x.Release()
	require.NoError(t, GradCheck(func(in []*Value) *Value { return cube.Apply(in[0]) },
		[]*Value{x}, GradCheckOptions{SecondOrder: true}))

	y := Param(tensor.FromFloat64(dev, randomValues(rng, 3), 3))
	k := Constant(tensor.FromFloat64(dev, randomValues(rng, 2*3), 2, 3))
	defer y.Release()
	defer k.Release()
	// y broadcasts in Forward, so Backward must sum over the batch: a
	// wrapper does it, as composed graph code would.
	f := func(in []*Value) *Value {
		yb := in[1].Reshape(1, 3).Expand(2, 3)
		return expScale.Apply(in[0], yb, in[2])
	}
	require.NoError(t, GradCheck(f, []*Value{x, y, k}, GradCheckOptions{}))
}

// TestFunctionValuesOnEveryDevice: results and gradients of the custom
// functions against float64 arithmetic, in float32, on each device.
func TestFunctionValuesOnEveryDevice(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		rng := rand.New(rand.NewPCG(7, 7))
		const n = 5
		xs, ys, ks := randomValues(rng, n), randomValues(rng, n), randomValues(rng, n)
		f32 := func(v []float64) *tensor.Tensor {
			out := make([]float32, len(v))
			for i := range v {
				out[i] = float32(v[i])
			}
			return tensor.FromFloat32(dev, out, len(v))
		}
		x, y, k := Param(f32(xs)), Param(f32(ys)), Constant(f32(ks))
		defer releaseValues([]*Value{x, y, k})
		s := NewScope()
		defer s.Close()
		out := expScale.Apply(cube.Apply(x), y, k)
		require.Same(t, s, s.Use(out).scope.Load())
		loss := out.Sum(nil, false)
		require.NoError(t, Backward(loss))
		got, gx, gy := read(t, out), read(t, x.Grad()), read(t, y.Grad())
		for i := range n {
			c := xs[i] * xs[i] * xs[i]
			e := math.Exp(c)
			require.InDelta(t, e*ys[i]+ks[i], got[i], 1e-5*(1+e), "value %d", i)
			require.InDelta(t, e*ys[i]*3*xs[i]*xs[i], gx[i], 1e-5*(1+e), "∂/∂x %d", i)
			require.InDelta(t, e, gy[i], 1e-5*(1+e), "∂/∂y %d", i)
		}
	})
}

// TestFunctionErrors: a Backward that returns the wrong count, shape or
// dtype is an error of Backward naming the Function; a wrong gradient is
// caught by GradCheck, which names the input, the element and both values.
func TestFunctionErrors(t *testing.T) {
	dev := cpuDevice(t)
	x := Param(tensor.FromFloat64(dev, []float64{0.5, -1, 2}, 3))
	defer x.Release()
	bad := func(backward func(c *Context, g *Value) []*Value) *Function {
		return &Function{Name: "Bad", SaveInputs: true, Backward: backward,
			Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) { return in[0].Square(), nil }}
	}
	for _, tc := range []struct {
		name, want string
		backward   func(c *Context, g *Value) []*Value
	}{
		{"count", "Backward returned 2 gradients for 1 inputs", func(c *Context, g *Value) []*Value { return []*Value{g, g} }},
		{"shape", "gradient of shape [1 3]", func(c *Context, g *Value) []*Value { return []*Value{g.Reshape(1, 3)} }},
		{"dtype", "dtype float32", func(c *Context, g *Value) []*Value { return []*Value{g.Cast(tensor.Float32)} }},
		{"unsaved", "does not set SaveOutput", func(c *Context, g *Value) []*Value { return []*Value{c.Output()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := bad(tc.backward).Apply(x).Sum(nil, false)
			defer y.Release()
			err := Backward(y)
			require.ErrorContains(t, err, "Bad")
			require.ErrorContains(t, err, tc.want)
		})
	}
	wrong := bad(func(c *Context, g *Value) []*Value { return []*Value{Mul(c.Input(0), g).MulScalar(3)} }) // 3x, not 2x
	err := GradCheck(func(in []*Value) *Value { return wrong.Apply(in[0]) }, []*Value{x}, GradCheckOptions{})
	// The weights of the output are random: the two values are in the
	// ratio of the wrong derivative to the right one, 3x/2x.
	m := regexp.MustCompile(`input 0, element 0 \[0\]: analytic gradient (\S+), finite differences (\S+) `).FindStringSubmatch(fmt.Sprint(err))
	require.NotNil(t, m, "%v", err)
	analytic, _ := strconv.ParseFloat(m[1], 64)
	numeric, _ := strconv.ParseFloat(m[2], 64)
	require.InDelta(t, 1.5, analytic/numeric, 1e-6)

	f32 := Param(tensor.FromFloat32(dev, []float32{1}, 1))
	defer f32.Release()
	require.ErrorContains(t, GradCheck(func(in []*Value) *Value { return in[0] }, []*Value{f32}, GradCheckOptions{}), "need float64")
	requireMisuse(t, tensor.Catch(func() { (&Function{Name: "Half"}).Apply(x) }), "Forward and Backward")
}

// TestFunctionOwnership: a Forward that returns its input and a Backward
// that returns a value it captured leave the caller's values alone; under
// a no-grad scope nothing is recorded and the saved tensors are released.
func TestFunctionOwnership(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		testdevice.QuietGC(t, dev)
		ones := Constant(tensor.FromFloat32(dev, []float32{1, 1}, 2))
		defer ones.Release()
		x := param(dev, []float32{2, 3}, 2)
		defer x.Release()
		base := liveBytes(dev)
		identity := &Function{
			Name: "Identity",
			Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
				return in[0], []*tensor.Tensor{in[0]}
			},
			Backward: func(c *Context, g *Value) []*Value { return []*Value{ones} }, // ∂/∂x = 1 for a summed loss
		}
		y := identity.Apply(x)
		loss := y.Sum(nil, false)
		y.Release()
		require.NoError(t, Backward(loss))
		loss.Release()
		require.Equal(t, []float64{1, 1}, read(t, x.Grad()))
		require.Equal(t, []float64{1, 1}, read(t, ones), "the captured value is still the caller's")
		require.Equal(t, []float64{2, 3}, read(t, x))
		x.ZeroGrad()
		require.Equal(t, base, liveBytes(dev))

		s := NewScope(NoGrad)
		z := expScale.Apply(s.Use(x.Detach()), x, ones)
		require.False(t, z.RequiresGrad())
		s.Close()
		require.Equal(t, base, liveBytes(dev), "nothing saved under no-grad")
	})
}
