package tensor

import "github.com/webtensor/webtensor/hal"

// The NN ops' entries in the op table: the hal kernels each one issues,
// directly or through the ops it is built from, so that Supports and the
// README table know them and checkOp can refuse an unsupported dtype
// under the name the user called.
var _ = registerOps(
	// Softmax's kernel is optional: without it, the row maximum, two
	// subtractions, a logsumexp and an exp (compositionKernels).
	Op{Name: "Softmax", Family: FamilyNN, DTypes: kernelTypes(hal.KernelSoftmax), Kernels: one(hal.KernelSoftmax)},
	Op{Name: "LogSoftmax", Family: FamilyNN, DTypes: kernelTypes(hal.KernelSoftmax), Kernels: one(hal.KernelSoftmax)},
	Op{Name: "Conv2d", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelIm2Col, t), k(hal.KernelMatMul, t), k(hal.Add.Kernel(), t))
	}},
	// Conv3d: Conv2d's kernels, the depth padding (Fill), the gather of
	// the depth slices (Gather), the layout copies and the taps' sums.
	Op{Name: "Conv3d", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelIm2Col, t), k(hal.KernelMatMul, t), k(hal.Add.Kernel(), t),
			k(hal.KernelFill, t), k(hal.KernelGather, t), k(hal.KernelCopy, t))
	}},
	Op{Name: "ConvTranspose2d", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelMatMul, t), k(hal.KernelCol2Im, t), k(hal.Add.Kernel(), t))
	}},
	Op{Name: "MaxPool2d", Family: FamilyNN, DTypes: kernelTypes(hal.PoolMax.Kernel()), Kernels: one(hal.PoolMax.Kernel())},
	Op{Name: "AvgPool2d", Family: FamilyNN, DTypes: kernelTypes(hal.PoolAvg.Kernel()), Kernels: one(hal.PoolAvg.Kernel())},
	Op{Name: "AdaptiveAvgPool2d", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.PoolAvg.Kernel(), t), k(hal.Sum.Kernel(), t), k(hal.Div.Kernel(), t))
	}},
	Op{Name: "BatchNorm", Family: FamilyNN, DTypes: floatTypes, Kernels: normKernels},
	Op{Name: "LayerNorm", Family: FamilyNN, DTypes: floatTypes, Kernels: normKernels},
	Op{Name: "Dropout", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.Bernoulli.Kernel(), Float32), k(hal.KernelCopy, Float32),
			k(hal.Div.Kernel(), t), k(hal.Mul.Kernel(), t))
	}},
	Op{Name: "RBFKernel", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.Square.Kernel(), t), k(hal.Sum.Kernel(), t), k(hal.Add.Kernel(), t),
			k(hal.KernelMatMul, t), k(hal.Clamp.Kernel(), t), k(hal.Mul.Kernel(), t), k(hal.Exp.Kernel(), t))
	}},
	Op{Name: "AffineGrid", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelFill, t), k(hal.KernelFill, Float32), k(hal.KernelCopy, Float32),
			k(hal.Mul.Kernel(), t), k(hal.Div.Kernel(), t), k(hal.Add.Kernel(), t), k(hal.KernelMatMul, t))
	}},
	Op{Name: "GridSample", Family: FamilyNN, DTypes: kernelTypes(hal.KernelGridSample), Kernels: one(hal.KernelGridSample)},
)

// normKernels are what BatchNorm and LayerNorm issue: mean and variance
// (sum, divide, subtract, square), then rsqrt(var + eps), scale and shift.
func normKernels(t DType) []Kernel {
	return kernels(k(hal.Sum.Kernel(), t), k(hal.Div.Kernel(), t), k(hal.Sub.Kernel(), t),
		k(hal.Square.Kernel(), t), k(hal.Add.Kernel(), t), k(hal.Rsqrt.Kernel(), t), k(hal.Mul.Kernel(), t))
}
