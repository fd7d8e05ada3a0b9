//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// softmaxMaxPerLane bounds the elements one invocation visits per phase
// on software adapters: there a row longer than this many per invocation
// is split into segments (see shaders/softmax.wgsl; llvmpipe stops loops
// at 65,535 iterations). Tests lower it to cover the segmented path on
// short rows.
var softmaxMaxPerLane = 4096

// Test switches: softmaxForceHardware takes the hardware adapters' path
// (no segments, their workgroup size) on software adapters too, and
// softmaxNoSubgroups keeps subgroup operations out of the kernels on a
// device that has them. Tests set them on rows under the loop cap.
var softmaxForceHardware, softmaxNoSubgroups bool

// softmaxNoVec4 keeps the register mode's rows scalar (test switch), and
// softmaxHook, when set (by tests), sees every pass's shader data as it is
// recorded.
var (
	softmaxNoVec4 bool
	softmaxHook   func(softmaxShader)
)

// softmaxMaxRegs is the most elements an invocation holds in registers in
// the hardware path's "regs" mode (4 vec4s): a row of up to
// softmaxMaxRegs × the workgroup size (16,384 at 1,024) is read once.
const softmaxMaxRegs = 16

// softmaxShader is the data of shaders/softmax.wgsl.
type softmaxShader struct {
	Mode, Src, Enable string
	Log               bool
	WorkgroupSize     int
	Subgroups         bool
	// Regs is the "regs" mode's elements (vec4s with Vec4) per
	// invocation.
	Regs int
	Vec4 bool
	// Lanes is the "rows" and "warp" modes' invocations per row.
	Lanes int
	// The "warp" mode's registers x0, x1, … (one per element of Units);
	// Exact: every row is exactly len(Units)·Lanes units, so no load or
	// store needs a bound; Pitch: src's rows are one stride apart (no
	// unravel); ExactExp: math.wgsl's exp_f instead of the mode's own.
	Units                  []int
	Exact, Pitch, ExactExp bool
}

// The environment knobs of the hardware path's softmax (see the package
// doc, "Softmax"): they choose among modes that only a GPU can rank.
const (
	SoftmaxModeEnv  = "WEBTENSOR_SOFTMAX_MODE"
	SoftmaxLanesEnv = "WEBTENSOR_SOFTMAX_LANES"
	SoftmaxExpEnv   = "WEBTENSOR_SOFTMAX_EXP"
	SoftmaxWGEnv    = "WEBTENSOR_SOFTMAX_WG"
)

// softmaxSettings are the knobs' values: mode "" picks per shape (warp,
// else rows, else regs, else full), a named mode is taken wherever it
// applies and the automatic choice elsewhere; lanes 0 lets the warp mode
// pick its lanes per row; exactExp puts exp_f in the warp mode; wg is the
// warp mode's workgroup size (0: workgroupSize).
type softmaxSettings struct {
	mode      string
	lanes, wg int
	exactExp  bool
}

// softmaxEnv parses the knobs once per process.
var softmaxEnv = sync.OnceValues(func() (softmaxSettings, error) { return parseSoftmaxEnv(os.Getenv) })

// parseSoftmaxEnv reads the knobs through getenv.
func parseSoftmaxEnv(getenv func(string) string) (softmaxSettings, error) {
	var s softmaxSettings
	switch m := strings.TrimSpace(getenv(SoftmaxModeEnv)); m {
	case "", "auto":
	case "warp", "rows", "regs", "full":
		s.mode = m
	default:
		return s, fmt.Errorf("webgpu: %s=%q: want warp, rows, regs, full or auto: %w", SoftmaxModeEnv, m, hal.ErrInvalid)
	}
	for _, k := range []struct {
		env string
		to  *int
	}{{SoftmaxLanesEnv, &s.lanes}, {SoftmaxWGEnv, &s.wg}} {
		if v := strings.TrimSpace(getenv(k.env)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1024 || n&(n-1) != 0 {
				return s, fmt.Errorf("webgpu: %s=%q: want a power of two from 1 to 1024: %w", k.env, v, hal.ErrInvalid)
			}
			*k.to = n
		}
	}
	switch e := strings.TrimSpace(getenv(SoftmaxExpEnv)); e {
	case "", "fast":
	case "exact":
		s.exactExp = true
	default:
		return s, fmt.Errorf("webgpu: %s=%q: want fast or exact: %w", SoftmaxExpEnv, e, hal.ErrInvalid)
	}
	return s, nil
}

// softmaxOverride, when set (by tests), replaces the knobs.
var softmaxOverride *softmaxSettings

func softmaxConfig() (softmaxSettings, error) {
	if softmaxOverride != nil {
		return *softmaxOverride, nil
	}
	return softmaxEnv()
}

// softmaxWarpRegs is the registers (units) per invocation the warp mode
// aims at when it picks its lanes: 8 vec4s hold a 1,024-element row in 32
// lanes, as CUDA's persistent softmax holds it in a warp.
const softmaxWarpRegs = 8

// softmaxWarpLanes returns the "warp" mode's invocations per row for rows
// of units registers' worth (vec4s or elements), and the workgroup size,
// or 0 when the mode does not apply: lanes is the knob's (at most
// softmaxMaxRegs units each), or the smallest of 32, 64, … that holds
// the row in softmaxWarpRegs units per invocation, never more than the
// workgroup (wgKnob within the device's limits, else 256 or the limit).
func (d *Device) softmaxWarpLanes(units, knob, wgKnob int) (lanes, wg int) {
	wg = d.workgroupSize()
	if wgKnob > 0 {
		wg = min(wgKnob, int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX))
	}
	if knob > 0 {
		if knob > wg || units > knob*softmaxMaxRegs {
			return 0, 0
		}
		return knob, wg
	}
	for lanes = min(32, wg); lanes <= wg; lanes *= 2 {
		if units <= lanes*softmaxWarpRegs {
			return lanes, wg
		}
	}
	return 0, 0
}

// softmaxRowsWorkgroup is the "rows" mode's workgroup size (within the
// device's limits): 8 rows of 32 lanes, or 4 of 64, per workgroup.
const softmaxRowsWorkgroup = 256

// softmaxRowsLanes returns the invocations per row of the hardware path's
// "rows" mode for rows of n, each holding at most softmaxMaxRegs elements,
// or 0 when rows of n are too long for it (more than 1,024 elements):
// 32 lanes up to 512 elements, 64 up to 1,024. wg is the workgroup size.
func (d *Device) softmaxRowsLanes(n int) (lanes, wg int) {
	limit := min(int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX))
	wg = min(softmaxRowsWorkgroup, limit)
	for _, lanes := range []int{32, 64} {
		if n <= lanes*softmaxMaxRegs && lanes <= wg {
			return lanes, wg
		}
	}
	return 0, 0
}

// softmaxVec4 reports whether every row of in and out starts on a 16-byte
// boundary and is whole vec4s, so that the "regs" mode may bind them as
// vec4s.
func softmaxVec4(in, out operand, n int, outerStrides []int) bool {
	if softmaxNoVec4 || n%4 != 0 || in.Offset%4 != 0 || out.Offset%4 != 0 || in.Strides[len(in.Strides)-1] != 1 {
		return false
	}
	for _, st := range outerStrides {
		if st%4 != 0 {
			return false
		}
	}
	return true
}

// softmaxHardware reports whether the device takes the hardware adapters'
// path: one task per row whatever its length. Only software adapters
// (type CPU: llvmpipe and lavapipe stop loops at 65,535 iterations) split
// long rows into segments.
func (d *Device) softmaxHardware() bool {
	return softmaxForceHardware || d.info.Type != hal.AdapterCPU
}

// softmaxWorkgroupSize is the invocations per row on the hardware path:
// about four elements each, from 64 to 1024 within the device's limits.
func (d *Device) softmaxWorkgroupSize(n int) int {
	limit := min(int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX), 1024)
	wg := 64
	for wg < limit && wg*4 < n {
		wg *= 2
	}
	for wg > limit {
		wg /= 2
	}
	return max(wg, 1)
}

// softmaxSoftwareWorkgroup is the invocations per row on software
// adapters. There a workgroup's barriers are what costs: llvmpipe and
// lavapipe run a workgroup as coroutines of 8-wide SIMD groups and switch
// all of them at every barrier, so a 256-invocation row spent 16
// barriers × 32 switches on 1,024 elements. Eight invocations, one SIMD
// group, still read a row in contiguous vectors (4× faster on lavapipe
// for 4096×1024 rows, where 16, 32 and 64 were each a little slower).
const softmaxSoftwareWorkgroup = 8

// softmaxFillTasks is about the number of workgroups that keep a large GPU
// busy (an H200 has 132 SMs), and softmaxMinPerLane the elements per
// invocation below which splitting a row costs more than it gains.
const softmaxFillTasks, softmaxMinPerLane = 256, 16

// softmaxPlan returns the workgroup size, the segments per row and the
// segment length for rows of n. Software adapters split a row only for
// the loop cap (softmaxMaxPerLane). Hardware adapters run a row as one
// workgroup, unless there are too few rows to fill the GPU and each is
// long: then a row is split into enough segments for about
// softmaxFillTasks workgroups in all, each invocation still visiting at
// least softmaxMinPerLane elements (a 1×1M softmax would otherwise run on
// one workgroup).
func (d *Device) softmaxPlan(rows, n int) (wg, segs, segLen int) {
	if !d.softmaxHardware() {
		wg = min(softmaxSoftwareWorkgroup, d.workgroupSize())
		if segs = ceilDiv(n, softmaxMaxPerLane*wg); segs > 1 {
			return wg, segs, softmaxMaxPerLane * wg
		}
		return wg, 1, n
	}
	wg = d.softmaxWorkgroupSize(n)
	if rows >= softmaxFillTasks || n <= softmaxMinPerLane*wg {
		return wg, 1, n
	}
	segs = min(ceilDiv(softmaxFillTasks, rows), ceilDiv(n, softmaxMinPerLane*wg))
	segLen = ceilDiv(n, segs)
	return wg, ceilDiv(n, segLen), segLen
}

// softmaxCapabilities declares Softmax for the float dtypes the device
// holds (hal's kernel table).
func (d *Device) softmaxCapabilities(c hal.Capabilities) {
	c.Declare(d.numericTypes(), hal.FamilySoftmax)
}

// Softmax computes softmax or log_softmax over the last axis; see
// hal.Device. On hardware adapters rows of up to 8,192 elements share
// workgroups (the "warp" mode: 32 invocations per row, more for rows over
// 1,024 elements; the package doc's "Softmax" names the knobs that pick
// the older "rows" and "regs" modes instead); otherwise a row is one
// workgroup. On software adapters a row is one workgroup of
// softmaxSoftwareWorkgroup invocations, float32 softmax in the "sweep"
// mode (one exponential per element), and rows longer
// than the per-invocation bound take two dispatches: per-segment (max,
// sum) pairs, then the outputs of each segment from its row's pairs.
func (d *Device) Softmax(dst, src hal.View, log bool) error {
	const name = hal.KernelSoftmax
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", name, hal.ErrClosed)
	}
	out, in, n, rows, err := d.lastAxisRows(name, dst, src)
	if err != nil || rows == 0 {
		return err
	}
	rank := len(in.Shape)
	wg, segs, segLen := d.softmaxPlan(rows, n)
	outer, st := collapse(in.Shape[:rank-1], in.Strides[:rank-1])
	var p params
	p.u32(uint32(rows * segs)).u32(uint32(n)).u32(uint32(segs)).u32(uint32(segLen))
	sh := softmaxShader{Src: wgslType(in.DType), Enable: enableF16(in.DType), Log: log, WorkgroupSize: wg,
		Subgroups: d.rt.HasSubgroups() && !softmaxNoSubgroups}
	cfg, err := softmaxConfig()
	if err != nil {
		return fmt.Errorf("webgpu: %s of %v: %w", name, in.View, err)
	}
	rp := rowPasses{d: d, name: name, in: in, out: out, outer: outer, strides: st[0], head: p}
	// run records one pass of mode.
	run := func(mode string, buffers ...*device.Allocation) error {
		sh.Mode = mode
		if softmaxHook != nil {
			softmaxHook(sh)
		}
		tasks := rows * segs
		if mode == "rows" || mode == "warp" {
			tasks = ceilDiv(rows, sh.WorkgroupSize/sh.Lanes)
		}
		return rp.record(fmt.Sprintf("softmax%+v", sh), "softmax.wgsl", sh, tasks, nil, buffers...)
	}
	// inRegisters sets the register count of a row shared by lanes
	// invocations, in vec4s where the layout allows.
	inRegisters := func(lanes int) {
		if sh.Vec4 = softmaxVec4(in, out, n, st[0]); sh.Vec4 {
			sh.Regs = ceilDiv(n/4, lanes)
		} else {
			sh.Regs = ceilDiv(n, lanes)
		}
	}
	hardware := segs == 1 && d.softmaxHardware()
	// want reports whether the knob lets mode be taken where it applies:
	// the automatic order is warp, rows, regs, full, and a named mode
	// skips those before it.
	order := map[string]int{"": 0, "warp": 0, "rows": 1, "regs": 2, "full": 3}
	want := func(mode string) bool { return order[cfg.mode] <= order[mode] }
	vec4 := softmaxVec4(in, out, n, st[0])
	units := n
	if vec4 {
		units = n / 4
	}
	if lanes, wwg := d.softmaxWarpLanes(units, cfg.lanes, cfg.wg); hardware && want("warp") && lanes > 0 {
		// Each row in LANES invocations' registers, unrolled; subgroup
		// folds where the probe found subgroups in aligned runs at this
		// workgroup size.
		sh.WorkgroupSize, sh.Lanes, sh.Vec4 = wwg, lanes, vec4
		sh.Subgroups = sh.Subgroups && d.subgroupsInRunsAt(wwg)
		regs := ceilDiv(units, lanes)
		sh.Units = make([]int, regs)
		for k := range sh.Units {
			sh.Units[k] = k
		}
		sh.Exact, sh.Pitch, sh.ExactExp = units == regs*lanes, len(outer) <= 1, cfg.exactExp
		return run("warp", out.alloc, in.alloc)
	}
	if lanes, rwg := d.softmaxRowsLanes(n); hardware && want("rows") && lanes > 0 {
		// Short rows: several per workgroup, each in registers, so that
		// every invocation has up to 16 elements in flight.
		// Subgroup operations fold a row's lanes only where the probe
		// found subgroups in aligned runs at this workgroup size.
		sh.WorkgroupSize, sh.Lanes = rwg, lanes
		sh.Subgroups = sh.Subgroups && d.reduce.subgroups && rwg == d.workgroupSize()
		inRegisters(lanes)
		return run("rows", out.alloc, in.alloc)
	}
	if hardware && want("regs") && n <= softmaxMaxRegs*wg {
		// The row in registers: read once, written once.
		inRegisters(wg)
		return run("regs", out.alloc, in.alloc)
	}
	if segs == 1 && !d.softmaxHardware() && !log && in.DType == hal.Float32 {
		// Software adapters: one exponential per element (see "sweep" in
		// shaders/softmax.wgsl); log_softmax's outputs need none, and
		// float16 outputs would round e^(x−max) before the division.
		sh.Vec4 = vec4
		return run("sweep", out.alloc, in.alloc)
	}
	if segs == 1 {
		return run("full", out.alloc, in.alloc)
	}
	return rp.segmented(rows*segs, run)
}

// rowPasses records the passes of an op over the rows of a last axis laid
// out by softmaxPlan (Softmax, LayerNorm): their parameters share one
// layout (head: tasks, n, segments, segment length; then the grid's
// width, the offsets, the last axis's stride, the outer axes), and rows
// split into segments take the same two passes.
type rowPasses struct {
	d              *Device
	name           string
	in, out        operand
	outer, strides []int
	head           params
}

// record renders template from data (cached under key) and records it over
// tasks workgroups; extra appends the op's own parameters after the outer
// rank and the zero word. Its error names the op and the view.
func (r rowPasses) record(key, template string, data any, tasks int, extra func(*params), buffers ...*device.Allocation) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("webgpu: %s of %v: %w", r.name, r.in.View, err)
		}
	}()
	k, err := r.d.rt.Kernel(key, len(buffers), 1, func() (string, error) { return render(template, data) })
	if err != nil {
		return err
	}
	x, y, err := r.d.grid(tasks)
	if err != nil {
		return err
	}
	rank := len(r.in.Shape)
	q := r.head
	q.u32(x).u32(uint32(r.in.Offset)).u32(uint32(r.out.Offset)).u32(uint32(r.in.Strides[rank-1])).
		u32(uint32(len(r.outer))).u32(0)
	if extra != nil {
		extra(&q)
	}
	q.vec8(r.outer, 1).vec8(r.strides, 0)
	r.d.record(dispatch{k: k, buffers: buffers, params: q, x: x, y: y, z: 1})
	return nil
}

// segmented records the two passes of rows split into segments: "stats"
// writes a pair of float32 per segment (tasks of them) into a scratch
// buffer, "apply" reads its row's pairs and writes its segment's outputs.
// run records a pass of a mode over its buffers.
func (r rowPasses) segmented(tasks int, run func(mode string, buffers ...*device.Allocation) error) error {
	stats, err := r.d.Alloc(int64(tasks) * 8)
	if err != nil {
		return fmt.Errorf("webgpu: %s of %v: partials: %w", r.name, r.in.View, err)
	}
	// Later uses of the memory are ordered after the passes recorded here.
	defer r.d.Free(stats)
	sa := stats.(*device.Buffer).Allocation()
	if err := run("stats", sa, r.in.alloc); err != nil {
		return err
	}
	return run("apply", r.out.alloc, r.in.alloc, sa)
}
