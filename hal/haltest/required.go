package haltest

import (
	"fmt"
	"maps"

	"github.com/webtensor/webtensor/hal"
)

// RequiredOnly returns dev as a backend that implements only the required
// tier would be (see hal.Optional): its Capabilities leave out every
// optional kernel, and calling one fails with hal.ErrUnsupported. The rest
// goes to dev unchanged. Backends run Run through it to show that the
// suite accepts a backend without the optional tier; package tensor's
// tests run its compositions through it against the fused kernels.
func RequiredOnly(dev hal.Device) hal.Device { return requiredOnly{dev} }

type requiredOnly struct{ hal.Device }

func (d requiredOnly) Capabilities() hal.Capabilities {
	caps := maps.Clone(d.Device.Capabilities())
	maps.DeleteFunc(caps, func(kernel string, _ hal.DTypeSet) bool { return hal.Optional(kernel) })
	return caps
}

// hidden is the error of an optional kernel the wrapper hides, naming
// the dtype as a backend's ErrUnsupported does.
func hidden(kernel string, dt hal.DType) error {
	return fmt.Errorf("%w: %s in %v (the optional tier is hidden)", hal.ErrUnsupported, kernel, dt)
}

func (d requiredOnly) Unary(op hal.UnaryOp, dst, src hal.View, args hal.Args) error {
	if hal.Optional(op.Kernel()) {
		return hidden(op.Kernel(), src.DType)
	}
	return d.Device.Unary(op, dst, src, args)
}

func (d requiredOnly) Softmax(dst, src hal.View, log bool) error {
	return hidden(hal.KernelSoftmax, src.DType)
}

func (d requiredOnly) LayerNorm(dst, src hal.View, eps float64) error {
	return hidden(hal.KernelLayerNorm, src.DType)
}

func (d requiredOnly) Conv2D(dst, src, weight hal.View, w hal.Window, groups int) error {
	return hidden(hal.KernelConv2D, src.DType)
}

func (d requiredOnly) Step(op hal.Optimizer, param, grad hal.View, state []hal.View, scale hal.View, a hal.StepArgs) error {
	return hidden(op.Kernel(), param.DType)
}

func (d requiredOnly) Linalg(op hal.LinalgOp, dst []hal.View, a, b hal.View, args hal.LinalgArgs) error {
	return hidden(op.Kernel(), a.DType)
}
