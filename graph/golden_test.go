package graph

// Composite graphs against PyTorch: testdata/golden/autograd/*.json hold
// the inputs of three small models (an MLP with softmax cross-entropy, a
// conv → batch norm → ReLU → max-pool block, a layer-norm + attention
// block) and PyTorch's loss and gradients for them, written by
// testdata/golden/gen.py (`make golden`). The per-op gradient checks
// compare each rule with finite differences; these check that the rules
// compose into what PyTorch computes, on every device:
//
//	go test ./graph -run 'TestGoldenAutograd/cpu/conv_bn/'

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

const autogradGoldenDir = "../testdata/golden/autograd"

// Tolerances: |got − want| ≤ rtol·max|want| + atol, per output tensor, or
// |got| ≤ zero for the outputs a model declares zero in exact arithmetic.
//
//   - float64: the models are a few dozen float64 kernels deep, each exact
//     to about 1e-16 relative to the magnitudes it combines, so 1e-10 of the
//     output's largest element leaves a factor of 10⁴ for cancellation
//     while any mistake in a rule is off by far more.
//   - float32: PyTorch's own float32 run of the same models stays within
//     3.3e-7 of the largest element of each expected output. 1e-4 allows
//     300 times that for other summation orders (tiled GPU matmuls, im2col
//     convolutions) and what WGSL lets a GPU's kernels add (÷ to 2.5 ulp,
//     √ to 4.5, subnormals flushed: haltest.WGSLAccuracy; the models pass
//     under an emulation of all of it on lavapipe), still far below the
//     O(1) relative error of a wrong rule; atol only keeps float32 noise
//     in the smallest elements from failing.
//   - outputs that cancel to zero: the conv bias's gradient under a
//     training batch norm (which subtracts every per-channel constant) sums
//     72 terms of total size ~40 per channel, which float32 leaves at ~1e-6
//     (PyTorch: 1.8e-6, this package's CPU 1e-6) and float64 at ~1e-14. Any
//     summation order lands within a few roundings of that sum; zero = 5e-5
//     leaves a factor of 25 and still catches a rule that forgets the mean
//     (an error of order 1). The attention key bias cancels likewise (a
//     softmax ignores what it adds to every score of a row).
//
// gen.py checks that PyTorch's float32 answer uses less than a tenth of
// these tolerances.
var autogradTolerances = map[tensor.DType]struct{ rtol, atol, zero float64 }{
	tensor.Float64: {1e-10, 1e-12, 1e-12},
	tensor.Float32: {1e-4, 1e-6, 5e-5},
}

type autogradFile struct {
	Family string         `json:"family"`
	Torch  string         `json:"torch"`
	Cases  []autogradCase `json:"cases"`
}

type autogradCase struct {
	Name    string                     `json:"name"`
	Model   string                     `json:"model"`
	DType   string                     `json:"dtype"`
	Args    map[string]json.RawMessage `json:"args"`
	Inputs  map[string]autogradTensor  `json:"inputs"`
	Outputs map[string]autogradTensor  `json:"outputs"`
}

// autogradTensor is a contiguous tensor; these files hold no NaN or
// infinities, so the data are plain JSON numbers.
type autogradTensor struct {
	DType string    `json:"dtype"`
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (c *autogradCase) dtype() tensor.DType {
	switch c.DType {
	case "float32":
		return tensor.Float32
	case "float64":
		return tensor.Float64
	}
	panic("golden: unknown dtype " + c.DType)
}

func (c *autogradCase) arg(key string, v any) {
	raw, ok := c.Args[key]
	if !ok {
		panic(fmt.Sprintf("golden %s: missing argument %q", c.Name, key))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		panic(fmt.Sprintf("golden %s: argument %q: %v", c.Name, key, err))
	}
}

func (c *autogradCase) floatArg(key string) float64 {
	var v float64
	c.arg(key, &v)
	return v
}

func (c *autogradCase) intArg(key string) int {
	var v int
	c.arg(key, &v)
	return v
}

// autogradEnv hands a model its inputs: each as a Param when the case
// expects its gradient, else as a Constant, or as a bare tensor for state
// an op updates in place (batch norm's running statistics). It remembers
// what it handed out, to compare and release afterwards.
type autogradEnv struct {
	c      *autogradCase
	dev    *tensor.Device
	values map[string]*Value
	state  map[string]*tensor.Tensor
	temps  []*Value
}

func (e *autogradEnv) tensor(name string) *tensor.Tensor {
	in, ok := e.c.Inputs[name]
	if !ok {
		panic(fmt.Sprintf("golden %s: no input %q", e.c.Name, name))
	}
	switch in.DType {
	case "int32":
		ints := make([]int32, len(in.Data))
		for i, v := range in.Data {
			ints[i] = int32(v)
		}
		return tensor.FromInt32(e.dev, ints, in.Shape...)
	case "float64":
		return tensor.FromFloat64(e.dev, in.Data, in.Shape...)
	case "float32":
		// The data are float32 numbers written exactly as doubles, so this
		// conversion is exact.
		f32 := make([]float32, len(in.Data))
		for i, v := range in.Data {
			f32[i] = float32(v)
		}
		return tensor.FromFloat32(e.dev, f32, in.Shape...)
	}
	panic(fmt.Sprintf("golden %s: input %q has dtype %q", e.c.Name, name, in.DType))
}

// v returns input name as a value (the same one on every call).
func (e *autogradEnv) v(name string) *Value {
	if x, ok := e.values[name]; ok {
		return x
	}
	t := e.tensor(name)
	var x *Value
	if _, ok := e.c.Outputs[name+".grad"]; ok {
		x = Param(t)
	} else {
		x = Constant(t)
	}
	e.values[name] = x
	return x
}

// s returns input name as a tensor the model may update in place; the
// case's output of the same name is its expected final content.
func (e *autogradEnv) s(name string) *tensor.Tensor {
	if x, ok := e.state[name]; ok {
		return x
	}
	x := e.tensor(name)
	e.state[name] = x
	return x
}

// k keeps an intermediate value until the case ends.
func (e *autogradEnv) k(x *Value) *Value {
	e.temps = append(e.temps, x)
	return x
}

func (e *autogradEnv) release() {
	releaseValues(e.temps)
	for _, x := range e.values {
		x.Release()
	}
	for _, x := range e.state {
		x.Release()
	}
}

// autogradModel builds a model's loss from its inputs, with this package's
// ops only, as gen.py builds it in PyTorch. ops are the tensor ops (names
// from tensor.Ops) it runs, to skip a dtype the device does not run.
type autogradModel struct {
	ops   []string
	build func(e *autogradEnv) *Value
	// zero lists the outputs that are zero in exact arithmetic.
	zero []string
}

// linear is x·wᵀ + b with PyTorch's weight layout [out, in], which also
// puts a transposed (strided) operand into every matmul.
func (e *autogradEnv) linear(x, w, b *Value) *Value {
	return e.k(Add(e.k(MatMul(x, e.k(w.T()))), b))
}

var autogradModels = map[string]autogradModel{
	// Softmax cross-entropy from its primitives:
	// −mean(gather(log_softmax(z), 1, labels)).
	"mlp": {
		ops: []string{"MatMul", "T", "LogSoftmax", "Gather", "Mean"},
		build: func(e *autogradEnv) *Value {
			h := e.v("x")
			for l := 1; l <= 3; l++ {
				h = e.linear(h, e.v(fmt.Sprintf("w%d", l)), e.v(fmt.Sprintf("b%d", l)))
				if l < 3 {
					h = e.k(ReLU(h))
				}
			}
			labels := e.v("labels")
			picked := e.k(e.k(LogSoftmax(h, 1)).Gather(1, e.k(labels.Reshape(labels.Shape()[0], 1))))
			return Neg(e.k(picked.Mean(nil, false)))
		},
	},
	"conv_bn": {
		ops:  []string{"Conv2d", "BatchNorm", "MaxPool2d"},
		zero: []string{"conv_b.grad"},
		build: func(e *autogradEnv) *Value {
			p := e.c.intArg("padding")
			k := e.c.intArg("pool")
			y := e.k(Conv2d(e.v("x"), e.v("conv_w"), e.v("conv_b"), tensor.ConvOptions{Padding: [2]int{p, p}}))
			y = e.k(BatchNorm(y, e.s("running_mean"), e.s("running_var"), e.v("bn_w"), e.v("bn_b"), true,
				e.c.floatArg("momentum"), e.c.floatArg("eps")))
			pooled, indices := MaxPool2d(e.k(ReLU(y)), tensor.PoolOptions{Kernel: [2]int{k, k}})
			e.k(pooled)
			e.k(indices)
			return e.k(Mul(pooled, e.v("r"))).Sum(nil, false)
		},
	},
	// softmax(Q·Kᵀ/√dk)·V with Q, K, V linear maps of layer_norm(x).
	"attention": {
		ops:  []string{"LayerNorm", "MatMul", "Transpose", "Softmax"},
		zero: []string{"bk.grad"},
		build: func(e *autogradEnv) *Value {
			x := e.v("x")
			h := e.k(LayerNorm(x, x.Shape()[2:], e.v("ln_w"), e.v("ln_b"), e.c.floatArg("eps")))
			q := e.linear(h, e.v("wq"), e.v("bq"))
			k := e.linear(h, e.v("wk"), e.v("bk"))
			v := e.linear(h, e.v("wv"), e.v("bv"))
			scores := e.k(e.k(MatMul(q, e.k(k.Transpose(1, 2)))).MulScalar(1 / math.Sqrt(float64(e.c.intArg("dk")))))
			out := e.k(MatMul(e.k(Softmax(scores, -1)), v))
			return e.k(Mul(out, e.v("r"))).Sum(nil, false)
		},
	},
}

func loadAutogradGolden(t *testing.T) []autogradFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(autogradGoldenDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no golden files in %s (run `make golden`)", autogradGoldenDir)
	var files []autogradFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var f autogradFile
		require.NoError(t, json.Unmarshal(b, &f), p)
		require.Equal(t, strings.TrimSuffix(filepath.Base(p), ".json"), f.Family, p)
		for _, c := range f.Cases {
			_, ok := autogradModels[c.Model]
			require.True(t, ok, "%s/%s: no Go model %q", f.Family, c.Name, c.Model)
		}
		files = append(files, f)
	}
	return files
}

func TestGoldenAutograd(t *testing.T) {
	files := loadAutogradGolden(t)
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		// Each case counts the device's live bytes before and after it;
		// the cleanup of a tensor that an earlier test forgot must not
		// free bytes in between.
		quietGC(t, dev)
		for _, f := range files {
			t.Run(f.Family, func(t *testing.T) {
				for i := range f.Cases {
					c := &f.Cases[i]
					t.Run(c.Name, func(t *testing.T) { runAutogradCase(t, dev, c) })
				}
			})
		}
	})
}

func runAutogradCase(t *testing.T, dev *tensor.Device, c *autogradCase) {
	model := autogradModels[c.Model]
	dtype := c.dtype()
	for _, op := range model.ops {
		if !tensor.Supports(dev, op, dtype) {
			// float32 runs on every device; only float64 may be missing.
			require.NotEqual(t, tensor.Float32, dtype, "%v does not run %s on float32", dev, op)
			t.Skipf("%v does not run %s on %v", dev, op, dtype)
		}
	}
	// Everything the case makes, the graph's saved tensors and the
	// gradients included, must be given back once its values are released.
	live := dev.Stats().LiveBytes
	defer func() {
		require.NoError(t, dev.Sync())
		require.Equal(t, live, dev.Stats().LiveBytes, "live device bytes after the case")
	}()
	e := &autogradEnv{c: c, dev: dev, values: map[string]*Value{}, state: map[string]*tensor.Tensor{}}
	defer e.release()

	var loss *Value
	require.NoError(t, tensor.Catch(func() { loss = model.build(e) }))
	defer loss.Release()
	require.NoError(t, Backward(loss))

	got := map[string][]float64{"loss": read(t, loss)}
	for name, x := range e.values {
		if g := x.Grad(); g != nil {
			got[name+".grad"] = read(t, g)
		}
	}
	for name, s := range e.state {
		x := Constant(alias(s))
		got[name] = read(t, x)
		x.Release()
	}
	// Every expected output is produced, and nothing else: the Go model
	// and gen.py's agree on which inputs require a gradient.
	require.Equal(t, slices.Sorted(maps.Keys(c.Outputs)), slices.Sorted(maps.Keys(got)), "outputs")
	for name := range c.Inputs {
		_, isValue := e.values[name]
		_, isState := e.state[name]
		require.True(t, isValue || isState, "input %q is not used by the Go model", name)
	}

	tol := autogradTolerances[dtype]
	for _, name := range slices.Sorted(maps.Keys(c.Outputs)) {
		want := c.Outputs[name]
		g := got[name]
		require.Len(t, g, len(want.Data), name)
		scale := 0.0
		for _, w := range want.Data {
			scale = math.Max(scale, math.Abs(w))
		}
		bound, how := tol.rtol*scale+tol.atol, fmt.Sprintf("%g·max|want| + %g", tol.rtol, tol.atol)
		if slices.Contains(model.zero, name) {
			require.Less(t, scale, 1e-12, "%s is declared zero in exact arithmetic", name)
			bound, how = tol.zero, "zero in exact arithmetic"
		}
		worst, at, bad := 0.0, 0, 0
		for j, w := range want.Data {
			d := math.Abs(g[j] - w)
			if !(d <= bound) {
				bad++
			}
			if !(d <= worst) {
				worst, at = d, j
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d elements off; worst [%d]: got %.10g, PyTorch %.10g (|Δ| = %.3g, tolerance %.3g: %s)",
				name, bad, len(g), at, g[at], want.Data[at], worst, bound, how)
			continue
		}
		t.Logf("%-16s max |Δ| = %.3g (%.2g of the tolerance)", name, worst, worst/bound)
	}
}
