package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/backend/wgpu"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// entry is one adapter as devicequery reports it; the JSON field names are
// part of the command's interface.
type entry struct {
	Device       string     `json:"device"`
	Name         string     `json:"name"`
	Vendor       string     `json:"vendor"`
	Architecture string     `json:"architecture"`
	Backend      string     `json:"backend"`
	Type         string     `json:"type"`
	Driver       string     `json:"driver"`
	Limits       hal.Limits `json:"limits"`
	Features     []string   `json:"features"`
	Default      bool       `json:"default"`
	// Kernels maps each hal kernel the device runs to its dtypes, as the
	// backend declares them when the device opens.
	Kernels map[string][]string `json:"kernels"`
	// OpenError says why the device could not be opened to ask.
	OpenError string `json:"openError,omitempty"`
}

// capabilitiesFunc opens the named device and returns what it runs.
type capabilitiesFunc func(device string) (hal.Capabilities, error)

// openCapabilities asks each device by opening it through tensor.
func openCapabilities(device string) (hal.Capabilities, error) {
	dev, err := tensor.Open(device)
	if err != nil {
		return nil, err
	}
	return dev.Capabilities(), nil
}

func buildEntries(adapters []tensor.Adapter, defaultName string, capabilities capabilitiesFunc) []entry {
	entries := make([]entry, 0, len(adapters))
	for _, a := range adapters {
		kernels, openErr := map[string][]string{}, ""
		if caps, err := capabilities(a.Name); err != nil {
			openErr = err.Error()
		} else {
			for k, set := range caps {
				for _, t := range set.List() {
					kernels[k] = append(kernels[k], t.String())
				}
			}
		}
		entries = append(entries, entry{
			Kernels:      kernels,
			OpenError:    openErr,
			Device:       a.Name,
			Name:         a.Info.Name,
			Vendor:       a.Info.Vendor,
			Architecture: a.Info.Architecture,
			Backend:      a.Info.Backend,
			Type:         a.Info.Type.String(),
			Driver:       a.Info.Driver,
			Limits:       a.Info.Limits,
			Features:     append([]string{}, a.Info.Features...), // [] rather than null in JSON
			Default:      a.Name == defaultName,
		})
	}
	return entries
}

// backendProblems explains, one line per backend, why a backend listed no
// adapters, with the fix when there is a known one. nativeLog is what the
// WebGPU library and the drivers printed while looking for adapters
// (held back from stderr by default), shown when they found none.
func backendProblems(errs map[string]error, nativeLog string) []string {
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		err := errs[name]
		line := fmt.Sprintf("%s backend lists no adapters: %v", name, err)
		switch {
		case errors.Is(err, hal.ErrLibraryNotFound):
			line += "\n  install the WebGPU library with `make deps`, or set WEBTENSOR_WEBGPU_LIB to the path of libwebgpu_dawn or libwgpu_native"
		case errors.Is(err, hal.ErrNoAdapter):
			line += "\n  the library loaded but no driver offered an adapter: check the GPU driver (Vulkan: `vulkaninfo --summary`; the loader reads VK_DRIVER_FILES and VK_ADD_DRIVER_FILES), and run `make deps` for the software adapters (lavapipe, llvmpipe)"
			if log := strings.TrimSpace(nativeLog); log != "" {
				line += "\n  what the library and drivers printed (" + wgpu.VerboseEnv + "=1 prints it as it happens):\n    " + strings.ReplaceAll(log, "\n", "\n    ")
			} else {
				line += "\n  set " + wgpu.VerboseEnv + "=1 to see what the library and drivers print"
			}
		}
		lines = append(lines, line)
	}
	return lines
}
