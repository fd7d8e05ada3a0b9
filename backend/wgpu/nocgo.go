//go:build !cgo && !(js && wasm)

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/hal"
)

// Without cgo there is no way to call webgpu.h; the backend registers so
// that callers see why it is missing instead of an unknown name.
func init() {
	unavailable := fmt.Errorf("webgpu: built without cgo (CGO_ENABLED=0): %w", hal.ErrUnavailable)
	hal.Register(hal.Backend{
		Name:     "webgpu",
		Adapters: func() ([]hal.Info, error) { return nil, unavailable },
		Open:     func(int) (hal.Device, error) { return nil, unavailable },
	})
}

// NativeLog is empty without cgo: no native library is loaded.
func NativeLog() string { return "" }
