//go:build cgo || (js && wasm)

package device

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// Kernel is a compiled pipeline and the shape of its bind group layout.
type Kernel struct {
	name     string
	pipeline webgpu.Pipeline
	storage  int // storage buffers bound at 0..storage-1
	writable int // of which the first `writable` are read-write
}

// Name is the kernel's name in the cache, which identifies its source.
func (k *Kernel) Name() string { return k.name }

// Storage is the number of storage buffers the kernel binds, at 0..Storage-1.
func (k *Kernel) Storage() int { return k.storage }

// Writable is how many of the bound buffers, the first ones, are read-write.
func (k *Kernel) Writable() int { return k.writable }

// ParamsBytes is the largest uniform block a kernel may declare.
const ParamsBytes = 256

// MaxBindings is the most storage buffers a kernel may bind.
const MaxBindings = 10

// kernelCache holds compiled kernels by name; each compiles once per device.
// A kernel the device refused is remembered too, with its error, so that
// it is neither compiled again on every call nor allowed to affect
// anything but the ops that need it.
type kernelCache struct {
	mu       sync.Mutex
	m        map[string]*Kernel
	rejected map[string]error
}

// Kernel returns the named kernel, compiling source() on first use. The
// name must identify the source completely (op, dtypes, variant).
//
// Compiling is synchronous, so a kernel the device cannot run fails the
// op that asks for it, at the call: with hal.ErrUnsupported, before any
// compile, when the source enables a WGSL extension the device lacks
// (requiredFeature); with hal.ErrShaderRejected when the device refuses
// the shader. Either answer is kept for the name. Running out of memory
// while compiling is not kept: a later call compiles again.
func (d *Device) Kernel(name string, storage, writable int, source func() (string, error)) (*Kernel, error) {
	d.kernels.mu.Lock()
	defer d.kernels.mu.Unlock()
	if k, ok := d.kernels.m[name]; ok {
		return k, nil
	}
	if err, ok := d.kernels.rejected[name]; ok {
		return nil, err
	}
	src, err := source()
	if err != nil {
		return nil, fmt.Errorf("webgpu: rendering kernel %s: %w", name, err)
	}
	if feature := d.missingFeature(src); feature != "" {
		return nil, d.rejectKernel(name, fmt.Errorf("webgpu: kernel %s needs the %s feature, which %s lacks: %w", name, feature, d.info.Name, hal.ErrUnsupported))
	}
	var p webgpu.Pipeline
	gpu.Run(func() { p, err = d.native.CreatePipeline(src, storage, writable, ParamsBytes) })
	if err != nil {
		var e *webgpu.Error
		if errors.As(err, &e) && (e.Code == webgpu.OutOfMemory || e.Code == webgpu.Lost) {
			return nil, fmt.Errorf("webgpu: compiling kernel %s on %s: %w", name, d.info.Name, classify(err))
		}
		return nil, d.rejectKernel(name, fmt.Errorf("webgpu: kernel %s on %s: %w:\n%v", name, d.info.Name, hal.ErrShaderRejected, err))
	}
	if d.kernels.m == nil {
		d.kernels.m = map[string]*Kernel{}
	}
	k := &Kernel{name: name, pipeline: p, storage: storage, writable: writable}
	d.kernels.m[name] = k
	return k, nil
}

// CachedKernels returns the kernels compiled so far, by name.
func (d *Device) CachedKernels() map[string]*Kernel {
	d.kernels.mu.Lock()
	defer d.kernels.mu.Unlock()
	return maps.Clone(d.kernels.m)
}

// rejectKernel remembers that kernel name fails with err and returns err.
// The caller holds d.kernels.mu.
func (d *Device) rejectKernel(name string, err error) error {
	if d.kernels.rejected == nil {
		d.kernels.rejected = map[string]error{}
	}
	d.kernels.rejected[name] = err
	return err
}

// missingFeature returns the device feature that WGSL source src needs and
// the device was not created with ("shader-f16", "subgroups"), or "" when
// it has all it needs. A kernel states what it needs in its enable
// directives, so this one check covers every kernel family.
func (d *Device) missingFeature(src string) string {
	for _, ext := range wgslExtensions(src) {
		switch ext {
		case "f16":
			if !d.hasF16 {
				return "shader-f16"
			}
		case "subgroups", "subgroups_f16", "chromium_experimental_subgroups":
			if !d.hasSubgroups {
				return "subgroups"
			}
			if ext == "subgroups_f16" && !d.hasF16 {
				return "shader-f16"
			}
		}
	}
	return ""
}

// wgslExtensions lists the extensions named by the enable directives at
// the start of WGSL source (which is the only place they may appear),
// skipping comments, blank space and other directives.
func wgslExtensions(src string) []string {
	var exts []string
	rest := src
	for {
		rest = skipSpaceAndComments(rest)
		word := rest
		if i := strings.IndexFunc(rest, func(r rune) bool {
			return !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
		}); i >= 0 {
			word = rest[:i]
		}
		if word != "enable" && word != "requires" && word != "diagnostic" {
			return exts
		}
		end := strings.IndexByte(rest, ';')
		if end < 0 {
			return exts
		}
		if word == "enable" {
			for _, e := range strings.Split(rest[len(word):end], ",") {
				if e = strings.TrimSpace(e); e != "" {
					exts = append(exts, e)
				}
			}
		}
		rest = rest[end+1:]
	}
}

// skipSpaceAndComments drops leading white space and // and /* */ comments
// (which nest in WGSL).
func skipSpaceAndComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n\v\f")
		switch {
		case strings.HasPrefix(s, "//"):
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i+1:]
			} else {
				return ""
			}
		case strings.HasPrefix(s, "/*"):
			depth, i := 1, 2
			for i < len(s) && depth > 0 {
				switch {
				case strings.HasPrefix(s[i:], "/*"):
					depth, i = depth+1, i+2
				case strings.HasPrefix(s[i:], "*/"):
					depth, i = depth-1, i+2
				default:
					i++
				}
			}
			s = s[i:]
		default:
			return s
		}
	}
}

// Post hands one kernel launch to the worker, which records it into the
// open batch; it returns at once. bufs are bound at bindings 0.. in order,
// each as far as BindSize reaches from its base; params is the uniform
// block; x, y, z the workgroup grid.
func (d *Device) Post(k *Kernel, bufs []*Allocation, params *[ParamsBytes]byte, x, y, z uint32) {
	if len(bufs) != k.storage {
		panic(fmt.Sprintf("webgpu: kernel %s binds %d buffers, got %d", k.name, k.storage, len(bufs)))
	}
	sizes := make([]uint64, 2*len(bufs))
	sizes, offsets := sizes[:len(bufs)], sizes[len(bufs):]
	for i, a := range bufs {
		sizes[i], offsets[i] = d.BindSize(a), uint64(a.base)
	}
	p := *params
	gpu.Post(func() { d.rec.dispatch(k, bufs, offsets, sizes, &p, x, y, z) })
}

// BindSize is the byte range of an allocation that kernels bind: all of it,
// up to the device's binding limit (views reaching past it are refused, or
// processed in windows), from a.Base().
func (d *Device) BindSize(a *Allocation) uint64 {
	return min(uint64(a.capacity), d.limits.MaxStorageBufferBindingSize) &^ 3
}
