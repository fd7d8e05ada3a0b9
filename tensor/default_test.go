package tensor

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

func TestPickDefault(t *testing.T) {
	var (
		discrete   = hal.Info{Name: "big GPU", Type: hal.AdapterDiscrete}
		integrated = hal.Info{Name: "laptop GPU", Type: hal.AdapterIntegrated}
		llvmpipe   = hal.Info{Name: "llvmpipe", Backend: "opengles", Type: hal.AdapterCPU}
		unknown    = hal.Info{Name: "mystery", Type: hal.AdapterUnknown}
	)
	tests := []struct {
		name     string
		override string
		gpus     []hal.Info
		want     string
	}{
		{"no GPU", "", nil, "cpu"},
		{"software only", "", []hal.Info{llvmpipe}, "cpu"},
		{"unknown only", "", []hal.Info{unknown, llvmpipe}, "cpu"},
		{"integrated", "", []hal.Info{llvmpipe, integrated}, "webgpu:1"},
		{"discrete beats integrated", "", []hal.Info{integrated, llvmpipe, discrete}, "webgpu:2"},
		{"first discrete", "", []hal.Info{discrete, discrete}, "webgpu:0"},
		{"override to cpu", "cpu", []hal.Info{discrete}, "cpu"},
		{"override canonical", "cpu:0", nil, "cpu"},
		{"override software", "webgpu:1", []hal.Info{discrete, llvmpipe}, "webgpu:1"},
		{"override bare webgpu", "webgpu", nil, "webgpu:0"},
		{"override passed through", "bogus:x", nil, "bogus:x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, pickDefault(tc.override, tc.gpus))
		})
	}
}

func TestDefaultNameHonorsEnvironment(t *testing.T) {
	t.Setenv(EnvDevice, "webgpu")
	assert.Equal(t, "webgpu:0", DefaultName())
	t.Setenv(EnvDevice, "cpu")
	assert.Equal(t, "cpu", DefaultName())

	require.NoError(t, os.Unsetenv(EnvDevice)) // t.Setenv restores it afterwards
	name := DefaultName()
	if name != "cpu" {
		// Whatever GPU is here, it must be a hardware one.
		for _, a := range Adapters() {
			if a.Name == name {
				assert.Contains(t, []hal.AdapterType{hal.AdapterDiscrete, hal.AdapterIntegrated}, a.Info.Type)
				return
			}
		}
		t.Fatalf("DefaultName %q is not among Adapters()", name)
	}
}

func TestDefault(t *testing.T) {
	dev := Default()
	require.NotNil(t, dev)
	assert.Same(t, dev, Default())
}

func TestAdapterPreference(t *testing.T) {
	gpu := []hal.AdapterType{hal.AdapterDiscrete, hal.AdapterIntegrated}
	assert.Equal(t, gpu, adapterPreference("linux", ""))
	assert.Equal(t, gpu, adapterPreference("linux", "1"), "the fallback variable is the browser's only")
	assert.Equal(t, append(gpu, hal.AdapterUnknown), adapterPreference("js", ""))
	assert.Equal(t, append(gpu, hal.AdapterUnknown), adapterPreference("js", "0"))
	assert.Equal(t, append(gpu, hal.AdapterUnknown, hal.AdapterCPU), adapterPreference("js", "1"))
}
