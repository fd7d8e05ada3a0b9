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
	// run records one pass of mode; its error names the op and the view.
	run := func(mode string, buffers ...*device.Allocation) (err error) {
		defer func() {
			if err != nil {
				err = fmt.Errorf("webgpu: %s of %v: %w", name, in.View, err)
			}
		}()
		sh.Mode = mode
		if layerNormHook != nil {
			layerNormHook(sh)
		}
		k, err := d.rt.Kernel(fmt.Sprintf("layernorm%+v", sh), len(buffers), 1, func() (string, error) { return render("layernorm.wgsl", sh) })
		if err != nil {
			return err
		}
		x, y, err := d.grid(rows * segs)
		if err != nil {
			return err
		}
		q := p
		q.u32(x).u32(uint32(in.Offset)).u32(uint32(out.Offset)).u32(uint32(in.Strides[rank-1])).
			u32(uint32(len(outer))).u32(0).f32(float32(eps)).vec8(outer, 1).vec8(st[0], 0)
		d.record(dispatch{k: k, buffers: buffers, params: q, x: x, y: y, z: 1})
		return nil
	}
	if segs == 1 {
		sh.Vec4 = in.DType == hal.Float32 && softmaxVec4(in, out, n, st[0])
		return run("row", out.alloc, in.alloc)
	}
	stats, err := d.Alloc(int64(rows) * int64(segs) * 8)
	if err != nil {
		return fmt.Errorf("webgpu: %s of %v: partials: %w", name, in.View, err)
	}
	// Later uses of the memory are ordered after the passes recorded here.
	defer d.Free(stats)
	sa := stats.(*device.Buffer).Allocation()
	if err := run("stats", sa, in.alloc); err != nil {
		return err
	}
	return run("apply", out.alloc, in.alloc, sa)
}
