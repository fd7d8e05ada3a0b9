//go:build cgo

package wgpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

func TestAdapterType(t *testing.T) {
	cases := []struct {
		raw  webgpu.AdapterInfo
		want hal.AdapterType
	}{
		{webgpu.AdapterInfo{AdapterType: webgpu.AdapterDiscrete, Device: "NVIDIA H100"}, hal.AdapterDiscrete},
		{webgpu.AdapterInfo{AdapterType: webgpu.AdapterIntegrated, Device: "Apple M2"}, hal.AdapterIntegrated},
		{webgpu.AdapterInfo{AdapterType: webgpu.AdapterCPU, Device: "SwiftShader Device"}, hal.AdapterCPU},
		// What Dawn's OpenGL ES backend reports for Mesa's software rasterizer.
		{webgpu.AdapterInfo{AdapterType: 4, Device: "llvmpipe (LLVM 15.0.6, 256 bits)"}, hal.AdapterCPU},
		{webgpu.AdapterInfo{AdapterType: 4, Device: "Mesa Intel(R) UHD Graphics 620"}, hal.AdapterUnknown},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, adapterType(c.raw), c.raw.Device)
	}
}

func TestFeatureNames(t *testing.T) {
	assert.Equal(t, "shader-f16", featureName(featureShaderF16))
	assert.Equal(t, "subgroups", featureName(featureSubgroups))
	assert.Equal(t, "feature-0x5ffff", featureName(0x5ffff))
}

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
