package main

import (
	"fmt"
	"math"
	"os"

	"github.com/webtensor/webtensor/bench/schema"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// benchCase is one thing to time. setup makes its inputs on dev and
// returns one iteration and what frees the inputs. An iteration returns
// its result (nil when it updates state in place): the caller keeps it
// alive until the device has run it, since a lazy engine may drop work
// whose result is released unread.
// bench/peers/peers.py defines the same cases under the same names.
type benchCase struct {
	name, group string
	size        float64 // the x axis of the group's chart
	unit        string
	work        float64 // per iteration: FLOPs, bytes or ops (see schema.Value)
	heavy       bool    // skipped on software adapters unless -full
	f16         bool    // needs float16 MatMul (WebGPU with shader-f16)
	// fusable cases (elementwise ops and reductions) are also measured
	// with fusion off on a WebGPU device (see fusionOffRuns).
	fusable bool
	// tol bounds the error of the first result against the CPU's:
	// max|got-want| ≤ tol·max(1, max|want|) (see checkResult); 0 is
	// defaultTol.
	tol float64
	// magnitude, when set, replaces max(1, max|want|) as the size tol is
	// relative to: a sum that cancels (Σx ≪ Σ|x|) rounds like Σ|x|, so
	// its error is only meaningful against that.
	magnitude float64
	setup     func(dev *tensor.Device) (run func() *tensor.Tensor, free func())
}

// cases lists the suite. quick swaps every size for a tiny one, for the
// smoke test and make bench-quick.
func cases(quick bool) []benchCase {
	var cs []benchCase
	matmuls := []int{256, 512, 1024, 2048, 4096}
	f16s := []int{1024, 2048, 4096}
	if quick {
		matmuls, f16s = []int{64, 128}, []int{64}
	}
	for _, n := range matmuls {
		cs = append(cs, matmulCase("matmul", n, tensor.Float32))
	}
	for _, n := range f16s {
		c := matmulCase("matmul-f16", n, tensor.Float16)
		c.f16, c.tol = true, 2e-2
		cs = append(cs, c)
	}
	batch, side := 64, 256
	if quick {
		batch, side = 4, 32
	}
	cs = append(cs, bmmCase(batch, side))

	for _, c := range convShapes(quick) {
		cs = append(cs, convCase(c))
	}
	for _, c := range convShapes(quick) {
		cs = append(cs, convBackwardCase(c))
	}
	for _, c := range conv3dShapes(quick) {
		for _, v := range []tensor.Conv3dVariant{tensor.Conv3dTaps, tensor.Conv3dStack} {
			cs = append(cs, conv3dCase(c, v))
		}
	}
	for _, c := range conv3dShapes(quick) {
		cs = append(cs, conv3dBackwardCase(c))
	}

	elems := []int{1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24}
	if quick {
		elems = []int{1 << 12, 1 << 16}
	}
	for _, n := range elems {
		cs = append(cs, addCase(n))
	}
	for _, n := range elems {
		cs = append(cs, reluCase(n))
	}
	for _, n := range elems {
		cs = append(cs, copyCase(n))
	}
	rows, cols, sumN, sumSmall := 4096, 1024, 1<<24, 1<<20
	if quick {
		rows, cols, sumN, sumSmall = 64, 128, 1<<16, 1<<12
	}
	// sum/1M is mostly launch latency: the passes a reduction takes.
	cs = append(cs, softmaxCase(rows, cols), sumCase(sumSmall), sumCase(sumN))
	cs = append(cs, sortCases(quick)...) // in peers.py's order, after sum

	cs = append(cs, trainCases(quick)...)

	ops, addN, mmN := 1000, 256, 32
	if quick {
		ops = 100
	}
	cs = append(cs, smallAddCase(ops, addN), smallMatMulCase(ops, mmN))
	cs = append(cs, onnxCases(quick)...)
	return cs
}

// count names an element count the way the case names do: 64K, 16M
// (powers of two), 10M (a round decimal million).
func count(n int) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%dM", n/1e6)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

func matmulCase(group string, n int, dtype tensor.DType) benchCase {
	return benchCase{
		name: fmt.Sprintf("%s/%d", group, n), group: group, size: float64(n),
		unit: schema.GFLOPS, work: 2 * float64(n) * float64(n) * float64(n), heavy: n >= 4096,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			g := tensor.NewGenerator(1)
			a, b := cast(g.Randn(dev, n, n), dtype), cast(g.Randn(dev, n, n), dtype)
			return func() *tensor.Tensor { return a.MatMul(b) }, releaser(a, b)
		},
	}
}

func bmmCase(batch, n int) benchCase {
	return benchCase{
		name: fmt.Sprintf("bmm/%dx%d", batch, n), group: "bmm", size: float64(n),
		unit: schema.GFLOPS, work: 2 * float64(batch) * float64(n) * float64(n) * float64(n),
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			g := tensor.NewGenerator(1)
			a, b := g.Randn(dev, batch, n, n), g.Randn(dev, batch, n, n)
			return func() *tensor.Tensor { return a.MatMul(b) }, releaser(a, b)
		},
	}
}

// convShape is one convolution layer: batch n, cin→cout channels on
// h×h inputs, a k×k kernel with "same" padding and stride 1.
type convShape struct{ n, cin, cout, h, k int }

// convShapes are ResNet-like layers: the 3×3 convolutions of the first
// three stages and a 1×1 bottleneck projection.
func convShapes(quick bool) []convShape {
	if quick {
		return []convShape{{2, 8, 8, 8, 3}, {2, 16, 8, 8, 1}}
	}
	return []convShape{
		{8, 64, 64, 56, 3},
		{8, 128, 128, 28, 3},
		{8, 256, 256, 14, 3},
		{8, 256, 64, 56, 1},
	}
}

func convCase(s convShape) benchCase {
	flops := 2 * float64(s.n*s.cout*s.h*s.h) * float64(s.cin*s.k*s.k)
	return benchCase{
		name:  fmt.Sprintf("conv2d/n%d-%dto%d-%dx%d-k%d", s.n, s.cin, s.cout, s.h, s.h, s.k),
		group: "conv2d", size: flops, unit: schema.GFLOPS, work: flops, heavy: flops > 10e9,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			g := tensor.NewGenerator(1)
			x := g.Randn(dev, s.n, s.cin, s.h, s.h)
			w := g.Randn(dev, s.cout, s.cin, s.k, s.k)
			opts := tensor.ConvOptions{Padding: [2]int{s.k / 2, s.k / 2}}
			return func() *tensor.Tensor { return tensor.Conv2d(x, w, nil, opts) }, releaser(x, w)
		},
	}
}

// conv3dShape is one 3-D convolution layer: batch n, cin→cout channels
// on d×h×h volumes, a k×k×k kernel with "same" padding and stride 1.
type conv3dShape struct{ n, cin, cout, d, h, k int }

// conv3dShapes are video/volume layers (C3D/R3D-like stages).
func conv3dShapes(quick bool) []conv3dShape {
	if quick {
		return []conv3dShape{{1, 4, 4, 4, 8, 3}}
	}
	return []conv3dShape{{2, 64, 64, 8, 28, 3}, {1, 32, 32, 16, 56, 3}}
}

// conv3dCase is tensor.Conv3d in one composition (tensor.EnvConv3d): the
// default's rows are "conv3d/…" (PyTorch's peer rows share the name),
// the other's "conv3d-<variant>/…".
func conv3dCase(s conv3dShape, v tensor.Conv3dVariant) benchCase {
	flops := 2 * float64(s.n*s.cout*s.d*s.h*s.h) * float64(s.cin*s.k*s.k*s.k)
	group := "conv3d"
	if v != tensor.Conv3dTaps {
		group += "-" + string(v)
	}
	return benchCase{
		name:  fmt.Sprintf("%s/n%d-%dto%d-%dx%dx%d-k%d", group, s.n, s.cin, s.cout, s.d, s.h, s.h, s.k),
		group: group, size: flops, unit: schema.GFLOPS, work: flops, heavy: flops > 10e9,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			g := tensor.NewGenerator(1)
			x := g.Randn(dev, s.n, s.cin, s.d, s.h, s.h)
			w := g.Randn(dev, s.cout, s.cin, s.k, s.k, s.k)
			p := s.k / 2
			opts := tensor.Conv3dOptions{Padding: [3]int{p, p, p}}
			// Conv3d reads the variable at each call, and a case's
			// iterations follow its setup: every conv3d row sets its own
			// here, whichever ran before.
			os.Setenv(tensor.EnvConv3d, string(v))
			return func() *tensor.Tensor { return tensor.Conv3d(x, w, nil, opts) }, releaser(x, w)
		},
	}
}

// conv3dBackwardCase is graph.Conv3d's backward pass (the default
// composition), as convBackwardCase: the input's and the weight's
// gradients for a given output gradient.
func conv3dBackwardCase(s conv3dShape) benchCase {
	flops := 4 * float64(s.n*s.cout*s.d*s.h*s.h) * float64(s.cin*s.k*s.k*s.k)
	return benchCase{
		name:  fmt.Sprintf("conv3d-backward/n%d-%dto%d-%dx%dx%d-k%d", s.n, s.cin, s.cout, s.d, s.h, s.h, s.k),
		group: "conv3d-backward", size: flops, unit: schema.GFLOPS, work: flops, heavy: flops > 20e9,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			g := tensor.NewGenerator(1)
			x := graph.Param(g.Randn(dev, s.n, s.cin, s.d, s.h, s.h))
			w := graph.Param(g.Randn(dev, s.cout, s.cin, s.k, s.k, s.k))
			seed := graph.Constant(g.Randn(dev, s.n, s.cout, s.d, s.h, s.h))
			p := s.k / 2
			opts := tensor.Conv3dOptions{Padding: [3]int{p, p, p}}
			os.Setenv(tensor.EnvConv3d, string(tensor.Conv3dTaps)) // as conv3dCase
			run := weightGradient(x, w, seed, func() *graph.Value { return graph.Conv3d(x, w, nil, opts) })
			return run, func() { x.Release(); w.Release(); seed.Release() }
		},
	}
}

// convBackwardCase is a convolution layer's backward pass: the input's
// and the weight's gradients for a given output gradient (PyTorch:
// y.backward(g)), twice the forward's multiply-adds.
func convBackwardCase(s convShape) benchCase {
	flops := 4 * float64(s.n*s.cout*s.h*s.h) * float64(s.cin*s.k*s.k)
	return benchCase{
		name:  fmt.Sprintf("conv2d-backward/n%d-%dto%d-%dx%d-k%d", s.n, s.cin, s.cout, s.h, s.h, s.k),
		group: "conv2d-backward", size: flops, unit: schema.GFLOPS, work: flops, heavy: flops > 20e9,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			g := tensor.NewGenerator(1)
			x := graph.Param(g.Randn(dev, s.n, s.cin, s.h, s.h))
			w := graph.Param(g.Randn(dev, s.cout, s.cin, s.k, s.k))
			seed := graph.Constant(g.Randn(dev, s.n, s.cout, s.h, s.h))
			opts := tensor.ConvOptions{Padding: [2]int{s.k / 2, s.k / 2}}
			run := weightGradient(x, w, seed, func() *graph.Value { return graph.Conv2d(x, w, nil, opts) })
			return run, func() { x.Release(); w.Release(); seed.Release() }
		},
	}
}

// weightGradient is one iteration of a convolution's backward pass: conv
// builds y from x and w, and the iteration differentiates it with seed as
// y's gradient, releases y and x's gradient, and returns w's (both
// gradients are computed: x's is released only once recorded).
func weightGradient(x, w, seed *graph.Value, conv func() *graph.Value) func() *tensor.Tensor {
	return func() *tensor.Tensor {
		y := conv()
		grads, err := graph.Grad([]*graph.Value{y}, []*graph.Value{x, w}, []*graph.Value{seed})
		if err != nil {
			panic(err)
		}
		y.Release()
		grads[0].Release()
		return grads[1].Tensor()
	}
}

// The elementwise cases count the bytes an op must move at the least:
// each input read once, the output written once.
//
// Their iterations alternate between two views of the same buffers, of
// shapes [n] and [2, n/2]. The WebGPU engine fuses elementwise ops of one
// shape into one kernel, which would load the inputs that back-to-back
// iterations share once for all of them; a change of shape closes the
// pending group, so that each iteration is a kernel of its own that reads
// its inputs and stores its result (TestEveryIterationRuns checks it
// with the device's dispatch count). It costs nothing: both views are
// contiguous and made once.
func addCase(n int) benchCase {
	return benchCase{
		name: "add/" + count(n), group: "add", size: float64(n), unit: schema.GBs, work: 3 * 4 * float64(n),
		fusable: true, tol: 1e-5,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			g := tensor.NewGenerator(1)
			a, b := g.Randn(dev, n), g.Randn(dev, n)
			as, bs := alternate(a), alternate(b)
			i := 0
			return func() *tensor.Tensor { i++; return as[i%2].Add(bs[i%2]) }, releaser(append(as, bs...)...)
		},
	}
}

func reluCase(n int) benchCase {
	return benchCase{
		name: "relu/" + count(n), group: "relu", size: float64(n), unit: schema.GBs, work: 2 * 4 * float64(n),
		fusable: true, tol: 1e-5,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			as := alternate(tensor.NewGenerator(1).Randn(dev, n))
			i := 0
			return func() *tensor.Tensor { i++; return as[i%2].ReLU() }, releaser(as...)
		},
	}
}

// copyCase is a device-to-device copy of n float32 values (a reflect Pad
// without padding: a plain Copy kernel), the bandwidth an elementwise op
// can hope for; every GB/s row is also given as a fraction of it
// (schema.Result.OfCopy).
func copyCase(n int) benchCase {
	return benchCase{
		name: "copy/" + count(n), group: "copy", size: float64(n), unit: schema.GBs, work: 2 * 4 * float64(n),
		fusable: true, tol: 1e-5,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			as := alternate(tensor.NewGenerator(1).Randn(dev, n))
			i := 0
			return func() *tensor.Tensor {
				i++
				return as[i%2].Pad([]int{0, 0}, tensor.PadReflect, 0)
			}, releaser(as...)
		},
	}
}

// alternate returns t and a [2, n/2] view of it (t itself twice where n
// is odd), for the iterations of an elementwise case to alternate.
func alternate(t *tensor.Tensor) []*tensor.Tensor {
	n := t.Len()
	if n%2 != 0 {
		return []*tensor.Tensor{t, t.Reshape(n)}
	}
	return []*tensor.Tensor{t, t.Reshape(2, n/2)}
}

func softmaxCase(rows, cols int) benchCase {
	return benchCase{
		name: fmt.Sprintf("softmax/%dx%d", rows, cols), group: "softmax", size: float64(rows * cols),
		unit: schema.GBs, work: 2 * 4 * float64(rows*cols), fusable: true, tol: 1e-4,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			a := tensor.NewGenerator(1).Randn(dev, rows, cols)
			return func() *tensor.Tensor { return a.Softmax(-1) }, releaser(a)
		},
	}
}

func sumCase(n int) benchCase {
	return benchCase{
		name: "sum/" + count(n), group: "sum", size: float64(n), unit: schema.GBs, work: 4 * float64(n),
		// Σ|x| of n standard normals is about √(2/π)·n; a float32 sum of
		// any order is within a few units of 2⁻²⁴ of that.
		fusable: true, tol: 2e-7, magnitude: math.Sqrt(2/math.Pi) * float64(n),
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			a := tensor.NewGenerator(1).Randn(dev, n)
			return func() *tensor.Tensor { return a.Sum(nil, false) }, releaser(a)
		},
	}
}

// smallAddCase is the per-op cost: a chain of ops adds on a tiny
// tensor, recorded back to back and waited for once.
func smallAddCase(ops, n int) benchCase {
	return chainCase("add", ops, n, func(dev *tensor.Device) (*tensor.Tensor, *tensor.Tensor) {
		g := tensor.NewGenerator(1)
		return g.Randn(dev, n), g.Randn(dev, n)
	}, (*tensor.Tensor).Add)
}

// smallMatMulCase is the same with n×n matrix products, which no
// elementwise fusion can merge: one dispatch (or call) per op.
func smallMatMulCase(ops, n int) benchCase {
	return chainCase("matmul", ops, n, func(dev *tensor.Device) (*tensor.Tensor, *tensor.Tensor) {
		return tensor.NewGenerator(1).Randn(dev, n, n), tensor.Eye(dev, n, n)
	}, (*tensor.Tensor).MatMul)
}

// chainCase times ops applications of step, x = step(x, w) starting from
// x0, as the smallops case op of size n. The chain (each op reads the
// last one's result) keeps an engine from dropping results that are
// released unread.
func chainCase(op string, ops, n int, operands func(dev *tensor.Device) (x0, w *tensor.Tensor),
	step func(x, w *tensor.Tensor) *tensor.Tensor) benchCase {
	return benchCase{
		name: fmt.Sprintf("smallops-%s/%dx%d", op, ops, n), group: "smallops", size: float64(n),
		unit: schema.UsOp, work: float64(ops),
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			x0, w := operands(dev)
			return func() *tensor.Tensor {
				x := step(x0, w)
				for range ops - 1 {
					next := step(x, w)
					x.Release()
					x = next
				}
				return x
			}, releaser(x0, w)
		},
	}
}

func cast(t *tensor.Tensor, dtype tensor.DType) *tensor.Tensor {
	if t.DType() == dtype {
		return t
	}
	defer t.Release()
	return t.Cast(dtype)
}

func releaser(ts ...*tensor.Tensor) func() {
	return func() {
		for _, t := range ts {
			t.Release()
		}
	}
}
