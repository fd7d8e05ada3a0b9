//go:build cgo

package webgpu

/*
#include <stdlib.h>
#include "loader.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// Device-lost reasons (WGPUDeviceLostReason).
const (
	LostUnknown           = 1
	LostDestroyed         = 2
	LostCallbackCancelled = 3
	LostFailedCreation    = 4
)

// Lost reports whether the device-lost callback has fired. It reads a flag
// in C memory with an atomic load: no cgo call, no lock, safe from any
// goroutine, so callers may poll it before every operation.
func (d *Device) Lost() bool { return atomic.LoadInt32(d.lost) != 0 }

// LostInfo returns the loss as an *Error with Code Lost and the library's
// message, and its WGPUDeviceLostReason; nil and 0 while the device lives.
func (d *Device) LostInfo() (reason uint32, err error) {
	var r C.uint32_t
	err = statusError(C.wt_device_lost_info(d.state, &r))
	return uint32(r), err
}

// ForceLoss makes the library lose the device as a driver reset would
// (Dawn's wgpuDeviceForceLoss), firing the device-lost callback. It
// returns false when the library has no such call (wgpu-native).
func (d *Device) ForceLoss(message string) bool {
	m := C.CString(message)
	defer C.free(unsafe.Pointer(m))
	return C.wt_device_force_loss(d.instance, d.c, m) != 0
}
