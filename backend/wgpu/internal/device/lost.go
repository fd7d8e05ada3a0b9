//go:build cgo || (js && wasm)

package device

import (
	"errors"
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// Device loss. A WebGPU device can be lost at any moment: a driver reset,
// a GPU removed, a watchdog killing a long kernel, or ForceLoss. Dawn then
// calls the device-lost callback, which sets a flag in C memory; every
// entry point (Alloc, Write, Read, Sync here, and every kernel, through
// operand and open in package wgpu) checks that flag first, with one
// atomic load, and fails with an error wrapping hal.ErrDeviceLost that
// names the device.
//
// After loss the device is a husk: its buffers' contents are gone and
// nothing it is asked to do reaches the GPU. Calls never hang and never
// crash: Dawn turns calls on a lost device into no-ops and resolves pending
// maps with an error, which Read reports as the loss. Free and Close stay
// safe. Recovery (a new device, restoring state) is the caller's business;
// internal/recovery does it.

// Lost reports whether the device has been lost. It is cheap enough to
// call before every operation.
func (d *Device) Lost() bool { return d.native != nil && d.native.Lost() }

// LostErr returns nil while the device lives, else an error wrapping
// hal.ErrDeviceLost that names operation op and gives the library's reason
// and message. Close destroys the native device, which Dawn reports as a
// loss; a closed device answers with hal.ErrClosed instead, from the
// callers' own closed checks.
func (d *Device) LostErr(op string) error {
	if !d.Lost() || d.Closed() {
		return nil
	}
	reason, err := d.native.LostInfo()
	msg := ""
	var e *webgpu.Error
	if errors.As(err, &e) {
		msg = strings.TrimSpace(e.Message)
	}
	return fmt.Errorf("webgpu: %s on %s: %w (reason %s): %s", op, d.info.Name, hal.ErrDeviceLost, lostReason(reason), msg)
}

// lostReason names a WGPUDeviceLostReason.
func lostReason(r uint32) string {
	switch r {
	case webgpu.LostUnknown:
		return "unknown"
	case webgpu.LostDestroyed:
		return "destroyed"
	case webgpu.LostCallbackCancelled:
		return "callback cancelled"
	case webgpu.LostFailedCreation:
		return "failed creation"
	}
	return fmt.Sprintf("%d", r)
}

// ForceLoss loses the device on purpose, as a driver reset would, so that
// recovery code can be tested: Dawn's wgpuDeviceForceLoss fires the
// device-lost callback with message, and every later call fails with
// hal.ErrDeviceLost. It fails with hal.ErrUnsupported when the library
// has no force-loss call (wgpu-native), and with hal.ErrClosed after Close.
func (d *Device) ForceLoss(message string) error {
	if d.Closed() {
		return fmt.Errorf("webgpu: ForceLoss on closed device %s: %w", d.info.Name, hal.ErrClosed)
	}
	var ok bool
	gpu.Run(func() { ok = d.native.ForceLoss(message) })
	if !ok {
		return fmt.Errorf("webgpu: ForceLoss on %s: the WebGPU library has no wgpuDeviceForceLoss: %w", d.info.Name, hal.ErrUnsupported)
	}
	return nil
}
