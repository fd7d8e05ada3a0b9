//go:build cgo

package gpu

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
	assert.Equal(t, "shader-f16", FeatureName(FeatureShaderF16))
	assert.Equal(t, "subgroups", FeatureName(FeatureSubgroups))
	assert.Equal(t, "feature-0x5ffff", FeatureName(0x5ffff))
}
