package cpu

import "github.com/webtensor/webtensor/hal"

var (
	floats    = hal.SetOf(hal.Float32, hal.Float64, hal.Float16)
	allDTypes = floats | hal.SetOf(hal.Int32)
)

// capabilities is what the kernels below implement: every kernel for every
// float dtype, and Int32 where hal's op table allows it.
func capabilities() hal.Capabilities {
	c := hal.Capabilities{
		hal.KernelFill:       allDTypes,
		hal.KernelCopy:       allDTypes,
		hal.KernelWhere:      allDTypes,
		hal.KernelMatMul:     floats,
		hal.KernelGather:     allDTypes,
		hal.KernelScatterAdd: allDTypes,
		hal.KernelIm2Col:     floats,
		hal.KernelCol2Im:     floats,
		hal.KernelGridSample: floats,
		hal.KernelSoftmax:    floats,
		hal.KernelConv2D:     floats,
	}
	for _, d := range hal.Distributions {
		c[d.Kernel()] = floats
	}
	for _, op := range hal.UnaryOps {
		c[op.Kernel()] = floats
		if op.RunsInt32() {
			c[op.Kernel()] = allDTypes
		}
	}
	for _, op := range hal.BinaryOps {
		c[op.Kernel()] = allDTypes
		if !op.RunsInt32() {
			c[op.Kernel()] = floats
		}
	}
	for _, op := range hal.ReduceOps {
		c[op.Kernel()] = allDTypes
		if op == hal.LogSumExp {
			c[op.Kernel()] = floats
		}
	}
	for _, op := range hal.PoolOps {
		c[op.Kernel()] = floats
	}
	for _, o := range hal.Optimizers {
		c[o.Kernel()] = floats
	}
	return c
}
