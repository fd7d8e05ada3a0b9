//go:build cgo || (js && wasm)

package gpu

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// adapterRequest is one way of asking the library for an adapter.
type adapterRequest struct {
	backend, featureLevel, power uint32
	fallback                     bool // the backend's software adapter
}

// adapterRequests lists the requests to make, best first: the platform's
// native API at core feature level (high-performance, then low-power to
// also find an integrated GPU next to a discrete one, then the native
// software adapter, such as lavapipe on Vulkan, which the first two never
// return while a GPU is present), then OpenGL ES at compatibility level,
// the only path to a device on machines without a native driver (Mesa's
// llvmpipe among them). A real GPU thus always comes first.
func adapterRequests() []adapterRequest {
	var native []uint32
	switch runtime.GOOS {
	case "js":
		return browserRequests()
	case "darwin", "ios":
		native = []uint32{webgpu.BackendMetal}
	case "windows":
		native = []uint32{webgpu.BackendD3D12, webgpu.BackendVulkan}
	default:
		native = []uint32{webgpu.BackendVulkan}
	}
	var out []adapterRequest
	for _, b := range native {
		out = append(out,
			adapterRequest{b, webgpu.FeatureLevelCore, webgpu.PowerHighPerformance, false},
			adapterRequest{b, webgpu.FeatureLevelCore, webgpu.PowerLow, false},
			adapterRequest{b, webgpu.FeatureLevelCore, webgpu.PowerHighPerformance, true})
	}
	return append(out, adapterRequest{webgpu.BackendOpenGLES, webgpu.FeatureLevelCompatibility, webgpu.PowerHighPerformance, false})
}

// Adapter is a found adapter, kept for the life of the process.
type Adapter struct {
	Handle webgpu.Adapter
	Raw    webgpu.AdapterInfo
	Info   hal.Info
}

// Session is the process-wide instance and the adapters it found, in the
// order "webgpu:N" indexes them.
type Session struct {
	Instance webgpu.Instance
	Adapters []*Adapter
}

var (
	sessionOnce sync.Once
	theSession  *Session
	sessionErr  error
)

// Start loads the library and lists adapters, once per process.
func Start() (*Session, error) {
	sessionOnce.Do(func() {
		if err := load(); err != nil {
			sessionErr = err
			return
		}
		Run(func() { Quietly(func() { theSession, sessionErr = discover() }) })
	})
	return theSession, sessionErr
}

func discover() (*Session, error) {
	instance, err := webgpu.CreateInstance()
	if err != nil {
		return nil, fmt.Errorf("webgpu: %v: %w", err, hal.ErrNoAdapter)
	}
	s := &Session{Instance: instance}
	seen := map[string]bool{}
	for _, req := range adapterRequests() {
		a, ok := instance.RequestAdapter(req.backend, req.featureLevel, req.power, req.fallback)
		if !ok {
			continue
		}
		raw := a.Info()
		key := fmt.Sprintf("%d/%d/%d/%s", raw.Backend, raw.VendorID, raw.DeviceID, raw.Device)
		if seen[key] {
			a.Release()
			continue
		}
		seen[key] = true
		s.Adapters = append(s.Adapters, &Adapter{Handle: a, Raw: raw, Info: halInfo(raw)})
	}
	return s, nil
}

// Adapters lists every adapter found, in the order "webgpu:N" indexes them.
func Adapters() ([]hal.Info, error) {
	s, err := Start()
	if err != nil {
		return nil, err
	}
	if len(s.Adapters) == 0 {
		return nil, fmt.Errorf("webgpu: %s loaded but offers no adapter (is a Vulkan, Metal, D3D12 or OpenGL ES driver installed?): %w", loaded, hal.ErrNoAdapter)
	}
	out := make([]hal.Info, len(s.Adapters))
	for i, a := range s.Adapters {
		out[i] = a.Info
	}
	return out, nil
}

func halInfo(raw webgpu.AdapterInfo) hal.Info {
	l := raw.Limits
	info := hal.Info{
		Name:         raw.Device,
		Vendor:       raw.Vendor,
		Architecture: raw.Architecture,
		Driver:       raw.Description,
		Backend:      backendName(raw.Backend),
		Type:         adapterType(raw),
		Limits: hal.Limits{
			MaxBufferSize:                     l.MaxBufferSize,
			MaxStorageBufferBindingSize:       l.MaxStorageBufferBindingSize,
			MaxStorageBuffersPerShaderStage:   l.MaxStorageBuffersPerShaderStage,
			MaxComputeWorkgroupStorageSize:    l.MaxComputeWorkgroupStorageSize,
			MaxComputeInvocationsPerWorkgroup: l.MaxComputeInvocationsPerWorkgroup,
			MaxComputeWorkgroupSizeX:          l.MaxComputeWorkgroupSizeX,
			MaxComputeWorkgroupSizeY:          l.MaxComputeWorkgroupSizeY,
			MaxComputeWorkgroupSizeZ:          l.MaxComputeWorkgroupSizeZ,
			MaxComputeWorkgroupsPerDimension:  l.MaxComputeWorkgroupsPerDimension,
		},
		Features: []string{},
	}
	for _, f := range raw.Features {
		info.Features = append(info.Features, FeatureName(f))
	}
	return info
}

func backendName(b uint32) string {
	switch b {
	case webgpu.BackendVulkan:
		return "vulkan"
	case webgpu.BackendMetal:
		return "metal"
	case webgpu.BackendD3D12:
		return "d3d12"
	case webgpu.BackendD3D11:
		return "d3d11"
	case webgpu.BackendOpenGL:
		return "opengl"
	case webgpu.BackendOpenGLES:
		return "opengles"
	case webgpu.BackendNull:
		return "null"
	case webgpu.BackendWebGPU:
		return "webgpu"
	}
	return fmt.Sprintf("backend-%d", b)
}

// softwareRenderers are substrings of the names that software rasterizers
// give themselves. Through OpenGL ES an implementation often cannot tell
// what the driver runs on and reports the type as unknown; these names say
// it is the CPU, which matters because tensor.Default never picks one.
var softwareRenderers = []string{"llvmpipe", "lavapipe", "softpipe", "swiftshader", "microsoft basic render", "warp"}

func adapterType(raw webgpu.AdapterInfo) hal.AdapterType {
	switch raw.AdapterType {
	case webgpu.AdapterDiscrete:
		return hal.AdapterDiscrete
	case webgpu.AdapterIntegrated:
		return hal.AdapterIntegrated
	case webgpu.AdapterCPU:
		return hal.AdapterCPU
	}
	name := strings.ToLower(raw.Device + " " + raw.Description)
	for _, s := range softwareRenderers {
		if strings.Contains(name, s) {
			return hal.AdapterCPU
		}
	}
	return hal.AdapterUnknown
}

// Feature identifiers (WGPUFeatureName) as the pinned Dawn numbers them.
// They follow the webgpu.h of early 2025, in which timestamp-query is 0x03
// and core-features-and-limits came last (0x12), not the later header that
// renumbered them: wgpu's TestIsolationUnsupportedBeforeCompile proves
// the values on an adapter that offers them, by compiling a shader that
// needs each feature on a device created with it.
const (
	FeatureTimestampQuery = 0x03
	FeatureShaderF16      = 0x0A
	FeatureSubgroups      = 0x11
)

var featureNames = map[uint32]string{
	0x01:                  "depth-clip-control",
	0x02:                  "depth32float-stencil8",
	FeatureTimestampQuery: "timestamp-query",
	0x04:                  "texture-compression-bc",
	0x05:                  "texture-compression-bc-sliced-3d",
	0x06:                  "texture-compression-etc2",
	0x07:                  "texture-compression-astc",
	0x08:                  "texture-compression-astc-sliced-3d",
	0x09:                  "indirect-first-instance",
	FeatureShaderF16:      "shader-f16",
	0x0B:                  "rg11b10ufloat-renderable",
	0x0C:                  "bgra8unorm-storage",
	0x0D:                  "float32-filterable",
	0x0E:                  "float32-blendable",
	0x0F:                  "clip-distances",
	0x10:                  "dual-source-blending",
	FeatureSubgroups:      "subgroups",
	0x12:                  "core-features-and-limits",
	0x50000:               "dawn-internal-usages",
	0x50001:               "dawn-multi-planar-formats",
	0x50002:               "dawn-native",
	0x50004:               "implicit-device-synchronization",
}

// WantedFeatures are the optional features a device is created with when
// its adapter offers them: the kernels use f16 and subgroups, and the
// profiler reads timestamps.
var WantedFeatures = []uint32{FeatureShaderF16, FeatureSubgroups, FeatureTimestampQuery}

// FeatureName is the name of WebGPU feature f, for messages.
func FeatureName(f uint32) string {
	if name, ok := featureNames[f]; ok {
		return name
	}
	return fmt.Sprintf("feature-0x%x", f)
}
