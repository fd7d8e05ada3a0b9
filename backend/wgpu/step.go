package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/hal"
)

// Step is the fused optimizer update (being written).
func (d *Device) Step(op hal.Optimizer, param, grad hal.View, state []hal.View, scale hal.View, a hal.StepArgs) error {
	return fmt.Errorf("webgpu: %s: %w", op.Kernel(), hal.ErrUnsupported)
}
