package haltest

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// ConvLayer is one benchmarked convolution: a batch of c×hw×hw images
// into cout channels through a k×k kernel, stride 1, padding pad.
type ConvLayer struct {
	n, c, hw, cout, k, pad int
}

// ResNetLayers are the ResNet-50-like convolutions at batch 8: the 3×3
// layers of the first three stages and a pointwise projection.
var ResNetLayers = []ConvLayer{
	{8, 64, 56, 64, 3, 1},
	{8, 128, 28, 128, 3, 1},
	{8, 256, 14, 256, 3, 1},
	{8, 256, 56, 64, 1, 0},
}

// SmallConvLayers are sizes a software adapter runs in milliseconds.
var SmallConvLayers = []ConvLayer{
	{1, 16, 16, 16, 3, 1},
	{2, 32, 8, 32, 3, 1},
	{2, 32, 16, 16, 1, 0},
}

// BenchmarkConv2D times each layer in float32 two ways: the Conv2D kernel,
// and the path without it (Im2Col into an unfolded buffer, then one
// batched MatMul against the weight broadcast over the batch). Both report
// GFLOPS of the convolution (2·N·Cout·OH·OW·C·KH·KW).
func BenchmarkConv2D(b *testing.B, dev hal.Device, layers []ConvLayer) {
	s := &suite{dev: dev, caps: dev.Capabilities()}
	for _, l := range layers {
		win := hal.Window{KH: l.k, KW: l.k, StrideH: 1, StrideW: 1, PadH: l.pad, PadW: l.pad, DilationH: 1, DilationW: 1}
		win.OutH = hal.OutputSize(l.hw, l.k, 1, l.pad, 1, false)
		win.OutW = win.OutH
		k, cols := l.c*l.k*l.k, win.OutH*win.OutW
		flops := 2 * float64(l.n*l.cout*cols) * float64(k)
		name := fmt.Sprintf("%dx%dx%dx%d-to-%d-k%d", l.n, l.c, l.hw, l.hw, l.cout, l.k)
		b.Run(name+"/conv2d", func(b *testing.B) {
			need(b, s, hal.KernelConv2D)
			x, w, dst := benchView(b, s, l.n, l.c, l.hw, l.hw), benchView(b, s, l.cout, l.c, l.k, l.k), benchView(b, s, l.n, l.cout, win.OutH, win.OutW)
			loop(b, dev, func() error { return dev.Conv2D(dst, x, w, win, 1) })
			reportFLOPS(b, flops)
		})
		b.Run(name+"/im2col-matmul", func(b *testing.B) {
			need(b, s, hal.KernelIm2Col)
			need(b, s, hal.KernelMatMul)
			x, w, dst := benchView(b, s, l.n, l.c, l.hw, l.hw), benchView(b, s, l.cout, k), benchView(b, s, l.n, l.cout, cols)
			unfolded := benchView(b, s, l.n, k, cols)
			wb := w
			wb.Shape, wb.Strides = []int{l.n, l.cout, k}, []int{0, k, 1}
			loop(b, dev, func() error {
				if err := dev.Im2Col(unfolded, x, win); err != nil {
					return err
				}
				return dev.MatMul(dst, wb, unfolded, 1, 0)
			})
			reportFLOPS(b, flops)
		})
	}
}
