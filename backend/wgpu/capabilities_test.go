//go:build cgo

package wgpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// TestCapabilitiesFollowTheKernelTable: the device declares every kernel
// of hal's kernel table, each for the dtypes of its entry that the device
// holds (Float32 and Int32, Float16 with shader-f16), and nothing else, so
// that a family left out of declareCapabilities fails here. The one
// family it leaves out on purpose is Linalg (see linalg.go).
func TestCapabilitiesFollowTheKernelTable(t *testing.T) {
	forEachTestDevice(t, testCapabilitiesFollowTheKernelTable)
}

func testCapabilitiesFollowTheKernelTable(t *testing.T, d *Device) {
	held := hal.SetOf(hal.Float32, hal.Int32)
	if d.rt.HasF16() {
		held |= hal.SetOf(hal.Float16)
	}
	caps := d.Capabilities()
	assert.Len(t, caps, len(hal.Kernels())-len(hal.LinalgOps))
	for _, k := range hal.KernelTable() {
		want := k.DTypes & held
		if k.Family == hal.FamilyLinalg {
			want = 0
		}
		assert.Equal(t, want, caps[k.Key], "%s: declares %v", k.Key, caps[k.Key].List())
	}
	assert.False(t, caps.Supports(hal.KernelMatMul, hal.Float64), "WGSL has no float64")
}
