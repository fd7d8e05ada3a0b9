package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNNMisuse checks the text of every NN op's misuse errors: each names
// the op, the offending shapes and dtypes, and what was expected.
func TestNNMisuse(t *testing.T) {
	dev := openCPU(t)
	other := openSecondCPU(t)
	var all nnScope
	defer all.release()
	zeros := func(shape ...int) *Tensor { return all.add(Zeros(dev, shape...)) }
	x := zeros(2, 3, 5, 5)
	w := zeros(4, 3, 3, 3)
	x64 := all.add(Full(dev, Float64, 0, 2, 3, 5, 5))
	xi := all.add(Full(dev, Int32, 0, 2, 3, 5, 5))
	wOther := all.add(Zeros(other, 4, 3, 3, 3))
	released := Zeros(dev, 2, 3, 5, 5)
	released.Release()

	tests := []struct {
		name string
		f    func()
		want string
	}{
		// Conv2d
		{"conv channels", func() { Conv2d(x, zeros(4, 2, 3, 3), nil, ConvOptions{}) },
			"tensor: Conv2d: input [2 3 5 5] float32 has 3 channels, but weight [4 2 3 3] float32 with groups 1 expects 2·1 = 2"},
		{"conv groups", func() { Conv2d(zeros(1, 4, 5, 5), zeros(3, 2, 3, 3), nil, ConvOptions{Groups: 2}) },
			"tensor: Conv2d: weight [3 2 3 3] float32 has 3 output channels, not divisible by groups 2"},
		{"conv weight rank", func() { Conv2d(x, zeros(4, 3, 3), nil, ConvOptions{}) },
			"tensor: Conv2d: weight [4 3 3] float32 must be 4-D"},
		{"conv input rank", func() { Conv2d(zeros(5, 5), w, nil, ConvOptions{}) },
			"tensor: Conv2d: input [5 5] float32 must be 3-D [C, H, W] or 4-D [N, C, H, W]"},
		{"conv kernel too large", func() { Conv2d(zeros(1, 1, 3, 3), zeros(1, 1, 2, 3), nil, ConvOptions{Dilation: [2]int{1, 2}}) },
			"tensor: Conv2d: kernel 2x3 (dilation [1 2]) spans 5 columns, more than the padded input [1 1 3 3] float32 (padding [0 0])"},
		{"conv bias", func() { Conv2d(x, w, zeros(3), ConvOptions{}) },
			"tensor: Conv2d: bias [3] float32 must be [4], one per output channel"},
		{"conv dtypes", func() { Conv2d(x64, w, nil, ConvOptions{}) },
			"tensor: Conv2d: input [2 3 5 5] float64 and weight [4 3 3 3] float32 have different dtypes"},
		{"conv int input", func() { Conv2d(xi, w, nil, ConvOptions{}) },
			"tensor: Conv2d: input [2 3 5 5] int32 must be a float tensor"},
		{"conv stride", func() { Conv2d(x, w, nil, ConvOptions{Stride: [2]int{-1, 1}}) },
			"tensor: Conv2d: stride [-1 1] must be positive"},
		{"conv padding", func() { Conv2d(x, w, nil, ConvOptions{Padding: [2]int{0, -2}}) },
			"tensor: Conv2d: padding [0 -2] must not be negative"},
		{"conv devices", func() { Conv2d(x, wOther, nil, ConvOptions{}) },
			"tensor: Conv2d: tensors on different devices: [2 3 5 5] float32 on cpu vs [4 3 3 3] float32 on test-second-cpu:0 (the Explicit placement moves nothing: copy one with To)"},
		{"conv released", func() { Conv2d(released, w, nil, ConvOptions{}) },
			"tensor: Conv2d: use of released tensor [2 3 5 5] on cpu"},
		{"conv nil", func() { Conv2d(nil, w, nil, ConvOptions{}) },
			"tensor: Conv2d: nil tensor"},

		// ConvTranspose2d
		{"convT channels", func() { ConvTranspose2d(x, zeros(4, 2, 3, 3), nil, ConvTransposeOptions{}) },
			"tensor: ConvTranspose2d: input [2 3 5 5] float32 has 3 channels, but weight [4 2 3 3] float32 expects 4"},
		{"convT groups", func() { ConvTranspose2d(x, zeros(3, 2, 3, 3), nil, ConvTransposeOptions{Groups: 2}) },
			"tensor: ConvTranspose2d: input [2 3 5 5] float32 has 3 channels, not divisible by groups 2"},
		{"convT output padding", func() {
			ConvTranspose2d(x, zeros(3, 2, 3, 3), nil, ConvTransposeOptions{Stride: [2]int{2, 1}, OutputPadding: [2]int{1, 1}})
		}, "tensor: ConvTranspose2d: output padding [1 1] must be smaller than either stride [2 1] or dilation [1 1] (width)"},
		{"convT bias", func() { ConvTranspose2d(x, zeros(3, 2, 3, 3), zeros(3), ConvTransposeOptions{}) },
			"tensor: ConvTranspose2d: bias [3] float32 must be [2], one per output channel"},
		{"convT too small", func() {
			ConvTranspose2d(zeros(1, 1, 1, 1), zeros(1, 1, 1, 1), nil, ConvTransposeOptions{Padding: [2]int{1, 0}})
		},
			"tensor: ConvTranspose2d: input [1 1 1 1] float32 with weight [1 1 1 1] float32, stride [1 1], padding [1 0], dilation [1 1] and output padding [0 0] gives output size -1x1, which is too small"},

		// Pooling
		{"pool padding", func() { MaxPool2d(x, PoolOptions{Kernel: [2]int{2, 2}, Padding: [2]int{2, 0}}) },
			"tensor: MaxPool2d: padding [2 0] must be at most half the kernel size [2 2]"},
		{"pool kernel", func() { MaxPool2d(x, PoolOptions{}) },
			"tensor: MaxPool2d: kernel size [0 0] must be positive"},
		{"pool too small", func() { MaxPool2d(zeros(1, 1, 2, 2), PoolOptions{Kernel: [2]int{3, 3}}) },
			"tensor: MaxPool2d: input [1 1 2 2] float32 with kernel [3 3], stride [3 3], padding [0 0] and dilation [1 1] gives output size 0x0, which is too small"},
		{"pool int", func() { MaxPool2d(xi, PoolOptions{Kernel: [2]int{2, 2}}) },
			"tensor: MaxPool2d: input [2 3 5 5] int32 must be a float tensor"},
		{"avg pool dilation", func() { AvgPool2d(x, PoolOptions{Kernel: [2]int{2, 2}, Dilation: [2]int{2, 2}}, true) },
			"tensor: AvgPool2d: dilation [2 2] is not supported: average pooling has none"},
		{"avg pool rank", func() { AvgPool2d(zeros(5), PoolOptions{Kernel: [2]int{2, 2}}, true) },
			"tensor: AvgPool2d: input [5] float32 must be 3-D [C, H, W] or 4-D [N, C, H, W]"},
		{"adaptive uneven", func() { AdaptiveAvgPool2d(zeros(1, 1, 5, 7), 2, 3) },
			"tensor: AdaptiveAvgPool2d: output size 2x3 does not divide input [1 1 5 7] float32 evenly; only 1x1 and divisible sizes are supported"},
		{"adaptive zero", func() { AdaptiveAvgPool2d(x, 0, 1) },
			"tensor: AdaptiveAvgPool2d: output size 0x1 must be positive"},

		// Normalization
		{"batch norm weight", func() { BatchNorm(zeros(2, 3), nil, nil, zeros(4), nil, true, 0.1, 1e-5) },
			"tensor: BatchNorm: weight [4] float32 must have shape [3] for input [2 3] float32"},
		{"batch norm eval", func() { BatchNorm(zeros(2, 3), nil, nil, nil, nil, false, 0.1, 1e-5) },
			"tensor: BatchNorm: evaluation mode needs runningMean and runningVar"},
		{"batch norm one value", func() { BatchNorm(zeros(1, 3), nil, nil, nil, nil, true, 0.1, 1e-5) },
			"tensor: BatchNorm: training needs more than 1 value per channel, input [1 3] float32 has 1"},
		{"batch norm rank", func() { BatchNorm(zeros(3), nil, nil, nil, nil, true, 0.1, 1e-5) },
			"tensor: BatchNorm: input [3] float32 must be at least 2-D [N, C, …]"},
		{"batch norm dtype", func() { BatchNorm(x64, nil, nil, zeros(3), nil, true, 0.1, 1e-5) },
			"tensor: BatchNorm: weight [3] float32 and input [2 3 5 5] float64 have different dtypes"},
		{"batch norm broadcast running", func() {
			BatchNorm(zeros(2, 3), all.add(zeros(1).Expand(3)), nil, nil, nil, true, 0.1, 1e-5)
		}, "tensor: BatchNorm: runningMean [3] float32 is a broadcast view (stride 0); it is updated in place and needs one element per channel"},
		{"batch norm momentum", func() { BatchNorm(x, nil, nil, nil, nil, true, 2, 1e-5) },
			"tensor: BatchNorm: momentum 2 must be in [0, 1]"},
		{"layer norm shape", func() { LayerNorm(zeros(2, 3, 4), []int{3}, nil, nil, 1e-5) },
			"tensor: LayerNorm: input [2 3 4] float32 does not end with normalizedShape [3]"},
		{"layer norm bias", func() { LayerNorm(zeros(2, 3, 4), []int{3, 4}, nil, zeros(4), 1e-5) },
			"tensor: LayerNorm: bias [4] float32 must have shape [3 4] for input [2 3 4] float32"},
		{"layer norm empty", func() { LayerNorm(zeros(2, 3, 4), nil, nil, nil, 1e-5) },
			"tensor: LayerNorm: normalizedShape must name at least one axis"},

		// Dropout, softmax, RBF
		{"dropout p", func() { Dropout(x, 1.5, true, NewGenerator(0)) },
			"tensor: Dropout: probability 1.5 must be in [0, 1]"},
		{"dropout generator", func() { Dropout(x, 0.5, true, nil) },
			"tensor: Dropout: nil generator"},
		{"softmax dim", func() { zeros(2, 3).Softmax(2) },
			"tensor: Softmax: dim 2 is out of range for rank 2 (want -2 … 1)"},
		{"log softmax int", func() { xi.LogSoftmax(0) },
			"tensor: LogSoftmax: input [2 3 5 5] int32 must be a float tensor"},
		{"rbf features", func() { RBFKernel(zeros(3, 2), zeros(4, 3), 1) },
			"tensor: RBFKernel: x [3 2] float32 and y [4 3] float32 have different feature sizes 2 and 3"},
		{"rbf rank", func() { RBFKernel(zeros(3), zeros(4, 3), 1) },
			"tensor: RBFKernel: x [3] float32 and y [4 3] float32 must be 2-D [n, d] and [m, d]"},

		// Sampling
		{"affine theta", func() { AffineGrid(zeros(2, 2, 2), []int{2, 1, 4, 4}, false) },
			"tensor: AffineGrid: theta [2 2 2] float32 must be [2, 2, 3] for size [2 1 4 4]"},
		{"affine size", func() { AffineGrid(zeros(2, 2, 3), []int{2, 4, 4}, false) },
			"tensor: AffineGrid: size [2 4 4] must be [N, C, H, W]"},
		{"grid sample batch", func() { GridSample(x, zeros(3, 4, 4, 2), GridZeros, false) },
			"tensor: GridSample: input [2 3 5 5] float32 and grid [3 4 4 2] float32 have different batch sizes"},
		{"grid sample grid", func() { GridSample(x, zeros(2, 4, 4, 3), GridBorder, false) },
			"tensor: GridSample: grid [2 4 4 3] float32 must be [N, OH, OW, 2]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, nnErrorText(t, tc.f))
		})
	}
}
