package main

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/bench/schema"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// trainCases are whole training steps — zero grad, forward, softmax
// cross-entropy, backward, optimizer step — and one optimizer update on
// its own.
func trainCases(quick bool) []benchCase {
	mlp, mlpBatch := []int{784, 512, 512, 10}, 128
	cnnSide, cnnBatch := 28, 64
	adamN := 10_000_000
	if quick {
		mlp, mlpBatch = []int{64, 32, 32, 10}, 16
		cnnSide, cnnBatch = 8, 8
		adamN = 1 << 16
	}
	return []benchCase{mlpCase(mlp, mlpBatch), cnnCase(cnnSide, cnnBatch), adamCase(adamN)}
}

// mlpCase is an MLP with ReLU between its layers, trained by SGD with
// momentum 0.9.
func mlpCase(widths []int, batch int) benchCase {
	parts := make([]string, len(widths))
	for i, w := range widths {
		parts[i] = fmt.Sprint(w)
	}
	return benchCase{
		name:  fmt.Sprintf("mlp-step/%s-b%d", strings.Join(parts, "-"), batch),
		group: "train", size: float64(batch), unit: schema.Ms,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			gen := tensor.NewGenerator(1)
			var mods []nn.Module
			for i := 0; i+1 < len(widths); i++ {
				if i > 0 {
					mods = append(mods, nn.ReLU{})
				}
				mods = append(mods, nn.NewLinear(dev, widths[i], widths[i+1], true, gen))
			}
			model := nn.NewSequential(mods...)
			opt := optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.01, Momentum: 0.9})
			return trainStep(dev, model, opt, gen, batch, []int{widths[0]}, widths[len(widths)-1])
		},
	}
}

// cnnCase is cmd/demo's network on 1×side×side images (28: MNIST's
// size), trained by Adam as the demo does.
func cnnCase(side, batch int) benchCase {
	return benchCase{
		name:  fmt.Sprintf("cnn-step/1x%dx%d-b%d", side, side, batch),
		group: "train", size: float64(batch), unit: schema.Ms,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			gen := tensor.NewGenerator(1)
			same := tensor.ConvOptions{Padding: [2]int{1, 1}}
			pool := tensor.PoolOptions{Kernel: [2]int{2, 2}}
			k3 := [2]int{3, 3}
			model := nn.NewSequential(
				nn.NewConv2d(dev, 1, 16, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
				nn.NewConv2d(dev, 16, 32, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
				nn.NewFlatten(),
				nn.NewLinear(dev, 32*(side/4)*(side/4), 64, true, gen), nn.ReLU{},
				nn.NewLinear(dev, 64, 10, true, gen),
			)
			opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 1e-3})
			return trainStep(dev, model, opt, gen, batch, []int{1, side, side}, 10)
		},
	}
}

// trainStep returns one training step of model on a fixed random batch.
func trainStep(dev *tensor.Device, model nn.Module, opt optim.Optimizer, gen *tensor.Generator, batch int, in []int, classes int) (func() *tensor.Tensor, func()) {
	x := graph.Constant(gen.Randn(dev, append([]int{batch}, in...)...))
	labels := make([]int32, batch)
	for i := range labels {
		labels[i] = int32((i * 7) % classes)
	}
	y := graph.Constant(tensor.FromInt32(dev, labels, batch))
	// The first step returns its loss, which checkResult compares with
	// the CPU's first step (same weights and batch, drawn by the same
	// generator); the timed steps keep nothing.
	first := true
	run := func() *tensor.Tensor {
		opt.ZeroGrad()
		logits := model.Forward(x)
		loss := nn.CrossEntropy(logits, y, 0)
		logits.Release()
		if err := graph.Backward(loss); err != nil {
			panic(err)
		}
		if err := opt.Step(); err != nil {
			panic(err)
		}
		var out *tensor.Tensor
		if first {
			first = false
			out = loss.Tensor().Contiguous() // a reference of its own
		}
		loss.Release()
		return out
	}
	free := func() {
		opt.ZeroGrad()
		x.Release()
		y.Release()
		if r, ok := opt.(interface{ Release() }); ok {
			r.Release()
		}
		nn.Release(model)
	}
	return run, free
}

// adamCase is one Adam step on a single parameter of n elements. GB/s
// counts the least traffic the update needs: it reads the parameter, the
// gradient and both moments and writes back the parameter and the
// moments, 7 × 4 bytes an element.
func adamCase(n int) benchCase {
	return benchCase{
		name: "adam/" + count(n), group: "optim", size: float64(n), unit: schema.GBs, work: 7 * 4 * float64(n),
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			gen := tensor.NewGenerator(1)
			p := graph.Param(gen.Randn(dev, n))
			p.SetGrad(gen.Randn(dev, n))
			opt := optim.NewAdam([]nn.Named{{Name: "p", Value: p}}, optim.AdamConfig{LR: 1e-3})
			return func() *tensor.Tensor {
					if err := opt.Step(); err != nil {
						panic(err)
					}
					return nil
				}, func() {
					if r, ok := any(opt).(interface{ Release() }); ok {
						r.Release()
					}
					p.Release()
				}
		},
	}
}
