//go:build cgo || (js && wasm)

package wgpu

import (
	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/hal"
)

// The process's WebGPU (the library, its instance and adapters, the worker
// thread every native call runs on) lives in internal/gpu; these are its
// names for the package's users.

// Adapters lists every adapter found, in the order "webgpu:N" indexes them.
func Adapters() ([]hal.Info, error) { return gpu.Adapters() }

// CacheDir is where `make deps` installs the pinned Dawn library.
func CacheDir() string { return gpu.CacheDir() }

// LoadedLibrary is the path of the WebGPU library in use, loading it if
// need be; "" when none loads.
func LoadedLibrary() string { return gpu.LoadedLibrary() }

// LavapipeICD is the Vulkan ICD file of the lavapipe that `make deps`
// fetches (scripts/fetch-lavapipe.sh): Mesa 25's Vulkan driver on the CPU,
// which Dawn accepts as a core adapter with shader-f16 and subgroups.
func LavapipeICD() string { return gpu.LavapipeICD() }

// NativeLog returns what the WebGPU library and the drivers printed while
// adapters were found and devices created, which is held back from stderr
// unless WEBTENSOR_WEBGPU_VERBOSE=1. cmd/devicequery shows it when no
// adapter is found.
func NativeLog() string { return gpu.NativeLog() }
