//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// layerNormShader is the data of shaders/layernorm.wgsl.
type layerNormShader struct {
	Mode, Src, Enable string
	WorkgroupSize     int
	Subgroups, Vec4   bool
}

// layerNormHook, when set (by tests), sees every pass's shader data as it
// is recorded.
var layerNormHook func(layerNormShader)

// layerNormCapabilities declares LayerNorm for the float dtypes the
// device holds (hal's kernel table).
func (d *Device) layerNormCapabilities(c hal.Capabilities) {
	c.Declare(d.floatTypes(), hal.FamilyLayerNorm)
}

// LayerNorm normalizes each row of src along its last axis; see
// hal.Device. A row is one workgroup, as softmax's "full" and "sweep"
// modes lay it out (softmaxPlan: 8 invocations on software adapters, about
// four elements per invocation on GPUs), reading it three times while it
// is in cache: Σx, Σ(x − mean)², the outputs; in vec4s where the rows
// allow (softmaxVec4). Rows past the software adapters' loop cap, and
// long rows too few to fill a GPU, are split into segments as softmax's
// are: per-segment (mean, Σ(x − mean)²) pairs, merged by each segment of
// the second dispatch. The softmax test switches (softmaxForceHardware,
// softmaxNoSubgroups, softmaxNoVec4, softmaxMaxPerLane) steer it too.
func (d *Device) LayerNorm(dst, src hal.View, eps float64) error {
	const name = hal.KernelLayerNorm
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", name, hal.ErrClosed)
	}
	out, in, n, rows, err := d.lastAxisRows(name, dst, src)
	if err != nil {
		return err
	}
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("webgpu: %s of %v: eps %v must be finite and not negative: %w", name, in.View, eps, hal.ErrInvalid)
	}
	if rows == 0 {
		return nil
	}
	rank := len(in.Shape)
	wg, segs, segLen := d.softmaxPlan(rows, n)
	outer, st := collapse(in.Shape[:rank-1], in.Strides[:rank-1])
	var p params
	p.u32(uint32(rows * segs)).u32(uint32(n)).u32(uint32(segs)).u32(uint32(segLen))
	sh := layerNormShader{Src: wgslType(in.DType), Enable: enableF16(in.DType), WorkgroupSize: wg,
		Subgroups: d.rt.HasSubgroups() && !softmaxNoSubgroups}
	rp := rowPasses{d: d, name: name, in: in, out: out, outer: outer, strides: st[0], head: p}
	// run records one pass of mode; eps follows the zero word.
	run := func(mode string, buffers ...*device.Allocation) error {
		sh.Mode = mode
		if layerNormHook != nil {
			layerNormHook(sh)
		}
		return rp.record(fmt.Sprintf("layernorm%+v", sh), "layernorm.wgsl", sh, rows*segs,
			func(q *params) { q.f32(float32(eps)) }, buffers...)
	}
	if segs == 1 {
		sh.Vec4 = in.DType == hal.Float32 && softmaxVec4(in, out, n, st[0])
		return run("row", out.alloc, in.alloc)
	}
	return rp.segmented(rows*segs, run)
}
