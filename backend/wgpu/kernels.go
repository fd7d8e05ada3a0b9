//go:build cgo

package wgpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"math"
	"strings"
	"sync"
	"text/template"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/shaders"
)

// kernel is a compiled pipeline and the shape of its bind group layout.
type kernel struct {
	name     string
	pipeline webgpu.Pipeline
	storage  int // storage buffers bound at 0..storage-1
	writable int // of which the first `writable` are read-write
}

// templates holds the parsed WGSL templates of package shaders.
var templates = sync.OnceValues(func() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"add": func(a, b int) int { return a + b },
	}).ParseFS(shaders.FS, "*.wgsl")
})

// render instantiates a WGSL template.
func render(file string, data any) (string, error) {
	t, err := templates()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, file, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// kernelCache holds compiled kernels by name; each compiles once per device.
// A kernel the device refused is remembered too, with its error, so that
// it is neither compiled again on every call nor allowed to affect
// anything but the ops that need it.
type kernelCache struct {
	mu       sync.Mutex
	m        map[string]*kernel
	rejected map[string]error
}

// kernel returns the named kernel, compiling source() on first use. The
// name must identify the source completely (op, dtypes, variant).
//
// Compiling is synchronous, so a kernel the device cannot run fails the
// op that asks for it, at the call: with hal.ErrUnsupported, before any
// compile, when the source enables a WGSL extension the device lacks
// (requiredFeature); with hal.ErrShaderRejected when the device refuses
// the shader. Either answer is kept for the name. Running out of memory
// while compiling is not kept: a later call compiles again.
func (d *Device) kernel(name string, storage, writable int, source func() (string, error)) (*kernel, error) {
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
	gpu.Run(func() { p, err = d.native.CreatePipeline(src, storage, writable, paramsBytes) })
	if err != nil {
		var e *webgpu.Error
		if errors.As(err, &e) && (e.Code == webgpu.OutOfMemory || e.Code == webgpu.Lost) {
			return nil, fmt.Errorf("webgpu: compiling kernel %s on %s: %w", name, d.info.Name, classify(err))
		}
		return nil, d.rejectKernel(name, fmt.Errorf("webgpu: kernel %s on %s: %w:\n%v", name, d.info.Name, hal.ErrShaderRejected, err))
	}
	if d.kernels.m == nil {
		d.kernels.m = map[string]*kernel{}
	}
	k := &kernel{name: name, pipeline: p, storage: storage, writable: writable}
	d.kernels.m[name] = k
	return k, nil
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

// workgroupSize is the invocations per workgroup of one-dimensional kernels.
func (d *Device) workgroupSize() int {
	wg := 256
	wg = min(wg, int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX))
	return max(wg, 1)
}

// grid spreads groups workgroups over x and y, each at most the device's
// per-dimension limit. A kernel recovers its linear workgroup index as
// wid.y·x + wid.x, so it needs x: pass it in the parameters.
func (d *Device) grid(groups int) (x, y uint32, err error) {
	limit := int(d.limits.MaxComputeWorkgroupsPerDimension)
	gx := min(max(groups, 1), limit)
	gy := (groups + gx - 1) / gx
	if gy > limit {
		return 0, 0, fmt.Errorf("%d workgroups exceed %d×%d: %w", groups, limit, limit, hal.ErrUnsupported)
	}
	return uint32(gx), uint32(gy), nil
}

// dispatch is one kernel launch: the buffers bound at bindings 0.. in
// order, the uniform parameters and the workgroup grid.
type dispatch struct {
	k       *kernel
	buffers []*allocation
	params  params
	x, y, z uint32
}

// record posts a dispatch to the worker, which records it into the open
// batch. It returns at once. A pending fused chain that dp depends on is
// recorded first (fusion.go).
func (d *Device) record(dp dispatch) {
	d.fuse.touch(dp)
	d.post(dp)
}

// post is record without the fusion check.
func (d *Device) post(dp dispatch) {
	if len(dp.buffers) != dp.k.storage {
		panic(fmt.Sprintf("webgpu: kernel %s binds %d buffers, got %d", dp.k.name, dp.k.storage, len(dp.buffers)))
	}
	sizes := make([]uint64, 2*len(dp.buffers))
	sizes, offsets := sizes[:len(dp.buffers)], sizes[len(dp.buffers):]
	for i, a := range dp.buffers {
		sizes[i], offsets[i] = d.bindSize(a), uint64(a.base)
	}
	gpu.Post(func() { d.rec.dispatch(dp.k, dp.buffers, offsets, sizes, dp.params, dp.x, dp.y, dp.z) })
}

// bindSize is the byte range of an allocation that kernels bind: all of it,
// up to the device's binding limit (views reaching past it are refused by
// operand, or processed in windows: chunk.go), from a.base.
func (d *Device) bindSize(a *allocation) uint64 {
	return min(uint64(a.capacity), d.limits.MaxStorageBufferBindingSize) &^ 3
}

// params encodes a kernel's uniform block: little-endian 32-bit words, laid
// out as the kernel's WGSL struct declares them (arrays of vec4<u32> keep
// the uniform address space's 16-byte array stride).
type params struct {
	b [paramsBytes]byte
	n int // bytes written
}

// epilogueWords is the number of uniform words a producer kernel keeps for
// its epilogue (shaders/gemm_common.wgsl's "epilogue_params").
const epilogueWords = 20

// epilogue writes the words of epi (zeros when epi is nil or renders its
// words as literals): first in a producer's params, before its own.
func (p *params) epilogue(epi *epilogue) *params {
	var words []uint32
	if epi != nil {
		words = epi.Words
	}
	for k := range epilogueWords {
		if k < len(words) {
			p.u32(words[k])
		} else {
			p.u32(0)
		}
	}
	return p
}

// u32 appends one word.
func (p *params) u32(v uint32) *params {
	binary.LittleEndian.PutUint32(p.b[p.n:], v)
	p.n += 4
	return p
}

// i32 appends a signed word.
func (p *params) i32(v int32) *params { return p.u32(uint32(v)) }

// f32 appends a float word.
func (p *params) f32(v float32) *params { return p.u32(math.Float32bits(v)) }

// align pads to a multiple of n bytes, as WGSL's struct layout requires
// before a vec4 or an array.
func (p *params) align(n int) *params {
	for p.n%n != 0 {
		p.u32(0)
	}
	return p
}

// vec8 appends eight words (array<vec4<u32>, 2>): the values of v, padded
// with pad. Shapes pad with 1 and strides with 0.
func (p *params) vec8(v []int, pad uint32) *params {
	p.align(16)
	for i := range hal.MaxRank {
		if i < len(v) {
			p.u32(uint32(v[i]))
		} else {
			p.u32(pad)
		}
	}
	return p
}

// bytes returns the encoded words.
func (p *params) bytes() []byte { return p.b[:p.n] }
