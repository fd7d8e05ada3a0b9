//go:build cgo

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/hal"
)

// Conv2D convolves src with weight; see hal.Device.
func (d *Device) Conv2D(dst, src, weight hal.View, w hal.Window, groups int) error {
	return fmt.Errorf("webgpu: %s: not implemented yet: %w", hal.KernelConv2D, hal.ErrUnsupported)
}
