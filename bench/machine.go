package main

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"github.com/webtensor/webtensor/bench/schema"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// machine describes this computer and the devices a run measures.
func machine(devs []*tensor.Device) schema.Machine {
	m := schema.Machine{
		CPU: cpuModel(), Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(),
	}
	for _, d := range devs {
		m.Devices = append(m.Devices, deviceInfo(d))
	}
	return m
}

func deviceInfo(d *tensor.Device) schema.Device {
	info := d.Info()
	return schema.Device{Name: d.Name(), Adapter: info.Name, Backend: info.Backend, Type: info.Type.String()}
}

// software reports whether d is a GPU API running on the CPU (Mesa's
// llvmpipe, SwiftShader): correct but slow, so the heavy cases are left
// out there unless -full.
func software(d *tensor.Device) bool {
	return d.Info().Backend != "cpu" && d.Info().Type == hal.AdapterCPU
}

// cpuModel is the processor's model name from /proc/cpuinfo, or the
// architecture where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
