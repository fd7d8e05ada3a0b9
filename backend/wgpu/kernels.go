//go:build cgo || (js && wasm)

package wgpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"text/template"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/shaders"
)

// templates holds the parsed WGSL templates of package shaders.
var templates = sync.OnceValues(func() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"add": func(a, b int) int { return a + b },
		"mul": func(a, b int) int { return a * b },
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

// workgroupSize is the invocations per workgroup of one-dimensional kernels.
func (d *Device) workgroupSize() int {
	wg := 256
	wg = min(wg, int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX))
	return max(wg, 1)
}

// grid spreads groups workgroups over x and y, each at most the device's
// per-dimension limit, as evenly as it can: the fewest rows, each as
// short as they allow, so that at most y−1 workgroups past groups are
// launched (65,536 groups run as 32,768×2, not 65,535×2, half of them
// idle: llvmpipe pays for every workgroup launched, idle or not). A kernel
// recovers its linear workgroup index as wid.y·x + wid.x, so it needs x:
// pass it in the parameters.
func (d *Device) grid(groups int) (x, y uint32, err error) {
	return gridOf(groups, int(d.limits.MaxComputeWorkgroupsPerDimension))
}

func gridOf(groups, limit int) (x, y uint32, err error) {
	groups = max(groups, 1)
	gy := (groups + limit - 1) / limit
	if gy > limit {
		return 0, 0, fmt.Errorf("%d workgroups exceed %d×%d: %w", groups, limit, limit, hal.ErrUnsupported)
	}
	gx := (groups + gy - 1) / gy
	return uint32(gx), uint32(gy), nil
}

// dispatch is one kernel launch: the buffers bound at bindings 0.. in
// order, the uniform parameters and the workgroup grid.
type dispatch struct {
	k       *device.Kernel
	buffers []*device.Allocation
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
	if f := d.posted.Load(); f != nil {
		(*f)(dp.k.Name())
	}
	d.rt.Post(dp.k, dp.buffers, &dp.params.b, dp.x, dp.y, dp.z)
}

// params encodes a kernel's uniform block: little-endian 32-bit words, laid
// out as the kernel's WGSL struct declares them (arrays of vec4<u32> keep
// the uniform address space's 16-byte array stride).
type params struct {
	b [device.ParamsBytes]byte
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
