//go:build cgo

package webgpu

/*
#include <stdlib.h>
#include "quiet.h"
*/
import "C"

import "unsafe"

// CaptureStderr runs f with the process's standard error (file descriptor
// 2, where Dawn's warnings and the drivers' messages go) redirected to a
// temporary file, and returns what was written there. The native libraries
// print from the calling thread during adapter discovery and device
// creation; anything the Go side prints in the meantime is captured too,
// so callers keep f short. Captures do not nest: an inner one runs f
// uncaptured.
func CaptureStderr(f func()) string {
	token := C.wt_capture_begin()
	f()
	out := C.wt_capture_end(token)
	if out == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoString(out)
}
