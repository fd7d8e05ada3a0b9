//go:build js && wasm

package gpu

import (
	"fmt"
	"os"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// In the browser there is no library to load: the page's navigator.gpu is
// the implementation. loaded names it for messages and LoadedLibrary.
var loaded = "navigator.gpu"

// load fails only when the page has no WebGPU.
func load() error {
	if !webgpu.Available() {
		return fmt.Errorf("webgpu: this browser has no navigator.gpu (WebGPU disabled or unsupported): %w", hal.ErrLibraryNotFound)
	}
	return nil
}

// browserRequests asks for the page's default adapter, then for its
// fallback (software) adapter when FallbackEnv is set; discover drops the
// second when it is the first again.
func browserRequests() []adapterRequest {
	out := []adapterRequest{{webgpu.BackendWebGPU, webgpu.FeatureLevelCore, webgpu.PowerHighPerformance, false}}
	if v := os.Getenv(FallbackEnv); v != "" && v != "0" {
		out = append(out, adapterRequest{webgpu.BackendWebGPU, webgpu.FeatureLevelCore, webgpu.PowerHighPerformance, true})
	}
	return out
}

// CacheDir is empty in the browser: nothing is installed.
func CacheDir() string { return "" }

// LoadedLibrary names the browser's WebGPU, or "" when the page has none.
func LoadedLibrary() string {
	if load() != nil {
		return ""
	}
	return loaded
}

// LavapipeICD is empty in the browser: the browser chooses its drivers.
func LavapipeICD() string { return "" }
