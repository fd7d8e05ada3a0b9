package cpu

import (
	"fmt"
	"math"
	"runtime"

	"github.com/webtensor/webtensor/hal"
)

func init() {
	hal.Register(hal.Backend{
		Name:     "cpu",
		Adapters: func() ([]hal.Info, error) { return []hal.Info{adapterInfo()}, nil },
		Open: func(index int) (hal.Device, error) {
			if index != 0 {
				return nil, fmt.Errorf("cpu: adapter %d out of range [0, 1): %w", index, hal.ErrNoAdapter)
			}
			return New(), nil
		},
	})
}

// maxBufferSize caps Alloc. The real limit is host memory, which Go cannot
// query portably, so this only keeps byte counts far from int64 overflow.
const maxBufferSize = 1 << 62

// adapterInfo describes the host processor. The workgroup limits are GPU
// notions with no CPU counterpart; they are reported as unbounded so that
// code sizing dispatches from them never splits work for this backend.
func adapterInfo() hal.Info {
	return hal.Info{
		Name:         fmt.Sprintf("Go CPU (%d cores, %s)", runtime.NumCPU(), runtime.GOARCH),
		Vendor:       "webtensor",
		Architecture: runtime.GOARCH,
		Driver:       runtime.Version(),
		Backend:      "cpu",
		Type:         hal.AdapterCPU,
		Limits: hal.Limits{
			MaxBufferSize:                     maxBufferSize,
			MaxStorageBufferBindingSize:       maxBufferSize,
			MaxStorageBuffersPerShaderStage:   math.MaxUint32,
			MaxComputeWorkgroupStorageSize:    math.MaxUint32,
			MaxComputeInvocationsPerWorkgroup: math.MaxUint32,
			MaxComputeWorkgroupSizeX:          math.MaxUint32,
			MaxComputeWorkgroupSizeY:          math.MaxUint32,
			MaxComputeWorkgroupSizeZ:          math.MaxUint32,
			MaxComputeWorkgroupsPerDimension:  math.MaxUint32,
		},
	}
}
