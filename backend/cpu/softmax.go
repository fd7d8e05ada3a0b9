package cpu

import "github.com/webtensor/webtensor/hal"

// Softmax computes softmax or log_softmax over the last axis; see hal.Device.
func (d *Device) Softmax(dst, src hal.View, log bool) error {
	return errorf(hal.KernelSoftmax, hal.ErrUnsupported, "not implemented yet")
}
