package adapters

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// What this repository's test machines offer: Mesa's two software
// adapters, which share a name.
var (
	lavapipe = hal.Info{Name: "llvmpipe (LLVM 15.0.6, 256 bits)", Backend: "vulkan", Type: hal.AdapterCPU}
	llvmpipe = hal.Info{Name: "llvmpipe (LLVM 15.0.6, 256 bits)", Backend: "opengles", Type: hal.AdapterCPU}
	h100     = hal.Info{Name: "NVIDIA H100", Backend: "vulkan", Type: hal.AdapterDiscrete}
	h100GLES = hal.Info{Name: "NVIDIA H100/PCIe/SSE2", Backend: "opengles", Type: hal.AdapterDiscrete}
)

func names(s Selection) []string {
	out := []string{}
	for _, a := range s.Adapters {
		out = append(out, a.Name())
	}
	return out
}

func TestSelect(t *testing.T) {
	errNoLibrary := errors.New("no library")
	cases := []struct {
		name     string
		infos    []hal.Info
		listErr  error
		filter   string
		ci       bool
		platform string
		want     []string
		missing  []string // substrings of Missing; nil: nothing missing
	}{
		{name: "every adapter by default", infos: []hal.Info{lavapipe, llvmpipe}, ci: true, platform: "linux/amd64",
			want: []string{"webgpu:0-vulkan", "webgpu:1-opengles"}},
		{name: "by index", infos: []hal.Info{lavapipe, llvmpipe}, filter: "1", ci: true, platform: "linux/amd64",
			want: []string{"webgpu:1-opengles"}},
		{name: "by API, any case, in index order, once each", infos: []hal.Info{h100, lavapipe, llvmpipe}, filter: "OpenGLES, vulkan,0", platform: "linux/amd64",
			want: []string{"webgpu:0-vulkan", "webgpu:1-vulkan", "webgpu:2-opengles"}},
		{name: "no library", listErr: errNoLibrary, platform: "linux/amd64",
			want: []string{}, missing: []string{"no WebGPU adapter", "make deps", "no library"}},
		{name: "CI needs both software adapters", infos: []hal.Info{lavapipe}, ci: true, platform: "linux/amd64",
			want:    []string{"webgpu:0-vulkan"},
			missing: []string{"no opengles adapter of type cpu", "webgpu:0-vulkan (llvmpipe (LLVM 15.0.6, 256 bits), cpu)", "make deps", Env}},
		{name: "CI on a GPU machine runs on what it has", infos: []hal.Info{h100, h100GLES}, ci: true, platform: "linux/amd64",
			want: []string{"webgpu:0-vulkan", "webgpu:1-opengles"}},
		{name: "CI on a GPU machine with a software adapter too", infos: []hal.Info{h100, llvmpipe}, ci: true, platform: "linux/amd64",
			want: []string{"webgpu:0-vulkan", "webgpu:1-opengles"}},
		{name: "CI needs both, none there", listErr: errNoLibrary, ci: true, platform: "linux/amd64",
			want: []string{}, missing: []string{"no vulkan adapter of type cpu; no opengles adapter of type cpu", "no library"}},
		{name: "only linux/amd64 needs both", infos: []hal.Info{h100}, ci: true, platform: "darwin/arm64",
			want: []string{"webgpu:0-vulkan"}},
		{name: "a filter replaces the software requirement", infos: []hal.Info{h100, h100GLES}, filter: "0", ci: true, platform: "linux/amd64",
			want: []string{"webgpu:0-vulkan"}},
		{name: "a filter entry that matches nothing", infos: []hal.Info{lavapipe, llvmpipe}, filter: "vulkan,metal,7", ci: true, platform: "linux/amd64",
			want: []string{"webgpu:0-vulkan"}, missing: []string{`no adapter matches "metal"`, `no adapter matches "7"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := selectFrom(c.infos, c.listErr, c.filter, c.ci, c.platform)
			assert.Equal(t, c.want, names(s))
			assert.Equal(t, c.ci, s.Required)
			if c.missing == nil {
				require.NoError(t, s.Missing)
				return
			}
			require.Error(t, s.Missing)
			for _, sub := range c.missing {
				assert.Contains(t, s.Missing.Error(), sub)
			}
			if c.listErr != nil {
				assert.ErrorIs(t, s.Missing, c.listErr)
			}
		})
	}
}

func TestAdapterNames(t *testing.T) {
	a := Adapter{Index: 1, Info: llvmpipe}
	assert.Equal(t, "webgpu:1", a.Device())
	assert.Equal(t, "webgpu:1-opengles", a.Name())
}
