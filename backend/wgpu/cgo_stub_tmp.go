//go:build cgo

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/hal"
)

// Temporary until the cgo binding lands.
func init() {
	unavailable := fmt.Errorf("webgpu: not implemented yet: %w", hal.ErrUnavailable)
	hal.Register(hal.Backend{
		Name:     "webgpu",
		Adapters: func() ([]hal.Info, error) { return nil, unavailable },
		Open:     func(int) (hal.Device, error) { return nil, unavailable },
	})
}
