//go:build cgo

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/hal"
)

// Softmax computes softmax or log_softmax over the last axis; see hal.Device.
func (d *Device) Softmax(dst, src hal.View, log bool) error {
	return fmt.Errorf("webgpu: %s: not implemented yet: %w", hal.KernelSoftmax, hal.ErrUnsupported)
}
