//go:build cgo || (js && wasm)

package gpu

import (
	"os"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
)

var nativeLog struct {
	sync.Mutex
	strings.Builder
}

// Quietly runs f, which calls into the native library, keeping what the
// library prints for NativeLog unless VerboseEnv is set. Worker only.
func Quietly(f func()) {
	if v := os.Getenv(VerboseEnv); v != "" && v != "0" {
		f()
		return
	}
	out := webgpu.CaptureStderr(f)
	if out == "" {
		return
	}
	nativeLog.Lock()
	defer nativeLog.Unlock()
	if nativeLog.Len() < 1<<16 { // a bound, should devices be opened in a loop
		nativeLog.WriteString(out)
	}
}

// NativeLog returns what the WebGPU library and the drivers printed while
// adapters were found and devices created, which is held back from stderr
// unless WEBTENSOR_WEBGPU_VERBOSE=1. cmd/devicequery shows it when no
// adapter is found.
func NativeLog() string {
	nativeLog.Lock()
	defer nativeLog.Unlock()
	return nativeLog.String()
}
