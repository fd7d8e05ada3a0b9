//go:build cgo

package wgpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAdaptersListed checks what devicequery shows: on the machines we test
// on, at least one adapter with a name, a graphics API and real limits.
func TestAdaptersListed(t *testing.T) {
	firstTestAdapter(t) // skips (or fails under CI) without an adapter
	infos, err := Adapters()
	assert.NoError(t, err)
	for _, info := range infos {
		assert.NotEmpty(t, info.Name)
		assert.Contains(t, []string{"vulkan", "metal", "d3d12", "d3d11", "opengl", "opengles"}, info.Backend)
		// More than the 128 invocations a device gets when it is created
		// without requiredLimits: the kernels use workgroups of 256.
		assert.GreaterOrEqual(t, info.Limits.MaxComputeInvocationsPerWorkgroup, uint32(256))
		assert.GreaterOrEqual(t, info.Limits.MaxComputeWorkgroupsPerDimension, uint32(65535))
		assert.NotNil(t, info.Features)
	}
}
