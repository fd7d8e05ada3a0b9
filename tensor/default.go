package tensor

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/webtensor/webtensor/backend/wgpu"
	"github.com/webtensor/webtensor/hal"
)

// EnvDevice is the environment variable that overrides Default's choice.
const EnvDevice = "WEBTENSOR_DEVICE"

var defaultDevice = sync.OnceValue(openDefault)

// Default returns the device that tensors go to when the caller has no
// preference. It is chosen once, at first use: the device named by
// WEBTENSOR_DEVICE if set, else the first discrete GPU, else the first
// integrated GPU, else the CPU. Software GPU adapters (llvmpipe, SwiftShader)
// are never picked automatically: the CPU backend is faster than them.
// In the browser (GOOS=js) the page's WebGPU adapter is picked too, whose
// kind browsers do not tell, and the browser's software adapter when the
// page sets wgpu.FallbackEnv (see package backend/wgpu, "In the browser").
//
// If an automatically chosen GPU fails to open, Default falls back to the
// CPU. If WEBTENSOR_DEVICE names a device that cannot be opened, Default
// panics with an *Error: the user asked for that device explicitly.
func Default() *Device { return defaultDevice() }

func openDefault() *Device {
	name := DefaultName()
	dev, err := Open(name)
	if err == nil {
		return dev
	}
	if _, explicit := os.LookupEnv(EnvDevice); explicit {
		panic(&Error{Op: "Default", Msg: fmt.Sprintf("%s=%q", EnvDevice, os.Getenv(EnvDevice)), Err: err})
	}
	if name != cpuBackend {
		if dev, cpuErr := Open(cpuBackend); cpuErr == nil {
			return dev
		}
	}
	panic(&Error{Op: "Default", Msg: "no usable device", Err: err})
}

// DefaultName returns the name of the device Default picks (or picked),
// without opening anything. It can differ from Default().Name() only when
// the chosen GPU fails to open and Default falls back to "cpu".
func DefaultName() string {
	if override := os.Getenv(EnvDevice); override != "" {
		// No need to list adapters, which would load the WebGPU library:
		// WEBTENSOR_DEVICE=cpu starts as fast as a program without a GPU.
		return pickDefault(override, nil)
	}
	return pickDefault("", backendAdapters(webgpuBackend))
}

// pickDefault is the device-selection rule. override is the value of
// WEBTENSOR_DEVICE ("" when unset); gpus are the WebGPU adapters in index
// order. It returns a device name for Open.
func pickDefault(override string, gpus []hal.Info) string {
	if override != "" {
		if backend, index, err := parseDeviceName(override); err == nil {
			return deviceName(backend, index)
		}
		return override // let Open explain what is wrong with it
	}
	for _, want := range adapterPreference(runtime.GOOS, os.Getenv(wgpu.FallbackEnv)) {
		for i, info := range gpus {
			if info.Type == want {
				return deviceName(webgpuBackend, i)
			}
		}
	}
	return cpuBackend
}

// adapterPreference lists the adapter types Default picks, best first, on
// GOOS goos with wgpu.FallbackEnv set to fallback. Natively a GPU, discrete
// before integrated; a software adapter never. In the browser (goos "js")
// also an adapter of unknown type, since browsers do not say which kind
// of GPU the page has (a software one reports itself as such), and, when
// the page sets wgpu.FallbackEnv, the browser's software adapter.
func adapterPreference(goos, fallback string) []hal.AdapterType {
	out := []hal.AdapterType{hal.AdapterDiscrete, hal.AdapterIntegrated}
	if goos == "js" {
		out = append(out, hal.AdapterUnknown)
		if fallback != "" && fallback != "0" {
			out = append(out, hal.AdapterCPU)
		}
	}
	return out
}
