//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// reduceCapabilities declares reductions and matrix products at the
// dtypes of hal's kernel table that the device holds.
func (d *Device) reduceCapabilities(c hal.Capabilities) {
	c.Declare(d.numericTypes(), hal.FamilyReduce, hal.FamilyMatMul)
}

// Reduction planning. A pass folds each row in segments of at most
// reduceMaxPerLane elements per invocation: llvmpipe stops a shader's loops
// after 65,535 iterations in total, and unravel may spend up to 8 more per
// element on a source with several reduced axes (4,096 × 9 + the tree stays
// well below). Longer rows leave partials that the next pass folds.
const (
	reduceMaxPerLane = 4096
	// reduceBlock is how many elements an invocation folds before merging
	// them into its running result: float sums then grow rounding error
	// with reduceBlock + count/reduceBlock additions, not count.
	reduceBlock = 64
	// reduceLaneWork is the element count per invocation below which a row
	// gets fewer lanes, leaving room for several rows per workgroup (a row
	// of 1,024 gets 32 lanes, a GPU's warp).
	reduceLaneWork = 32
	// A pass over few rows splits them into segments until it has
	// reduceTargetTasks tasks, so that one long row still spreads over many
	// workgroups, but not below reduceMinPerLane elements per invocation.
	reduceTargetTasks = 256
	reduceMinPerLane  = 128
	// Measured on llvmpipe, where each tree level costs a barrier: going
	// from (reduceLaneWork, reduceMinPerLane) = (8, 32) to (32, 128) took a
	// 1M-element sum from 0.6 to 1.6 GB/s and a 1024×1024 row sum from 0.2
	// to 1.1–2.3 GB/s.
)

// The hardware plan: real GPUs have no loop cap, so a pass is bounded only
// for accuracy, and passes are what cost (each one a launch). A full
// reduction takes at most two dispatches: the first spreads the row over
// about reduceHWTargetTasks workgroups, each folding one contiguous block
// with all of its lanes (neighbouring lanes, neighbouring elements), and the
// second folds those partials in one workgroup. A row reduction of many rows
// is one workgroup (or fewer) per row in one pass.
const (
	// reduceHWMaxPerLane bounds an invocation's loop for accuracy only:
	// with the shader's two block levels (.Block2) a float sum's rounding
	// grows with 64 + 64 + count/4,096 additions, as the software plan's
	// does with its cap of 4,096 per lane.
	reduceHWMaxPerLane = reduceBlock * reduceBlock * reduceBlock
	// reduceHWLaneWork: rows get lanes until each has about this many
	// elements, up to the workgroup size (a row of 1,024 gets 256 lanes).
	reduceHWLaneWork = 4
	// reduceHWTargetTasks workgroups fill a large GPU (an H200 has 132
	// SMs); a row is not split below reduceHWMinPerLane elements per lane
	// (1M elements: 64 workgroups of 256; 16M: 512). The second pass then
	// has at most reduceHWTargetTasks partials per row, which one workgroup
	// folds in one pass (≤ 4 elements per lane at a workgroup of 128 or
	// more, under reduceHWMinPerLane). At 16 per lane, products of 80K
	// floats on lavapipe and llvmpipe drifted past the chunked reduction
	// test's bound (relative 2.2e-4 against 1.4e-4 at 64, where a serial
	// round-to-nearest float32 product is off by 5e-6; the software
	// adapters' products drift one way, for a cause not yet found, and
	// more, shorter pieces drifted further).
	reduceHWTargetTasks = 512
	reduceHWMinPerLane  = 64
	// A vec4 pass (reduceShader.Vec4) keeps 4 loads of 16 bytes in flight
	// per lane, so it can afford more, shorter tasks: up to
	// reduceHWVecTargetTasks workgroups (16M elements: 1,024 workgroups of
	// 256 lanes, 64 elements each, about 8 per SM of an H200, a full SM's
	// 2,048 invocations; 1M: 128 workgroups of 32 per lane) and segments
	// in whole steps of reduceHWVecStep elements per lane. The second pass
	// folds ≤ 1,024 partials in one workgroup.
	reduceHWVecTargetTasks = 1024
	reduceHWVecMinPerLane  = 32
	reduceHWVecStep        = 16
)

// reduceNoVec4 keeps reductions off the vec4 path (test switch, so that
// tests compare both paths on the same device).
var reduceNoVec4 bool

// reducePassHook, when set (by tests), sees every pass's shader data as
// it is recorded.
var reducePassHook func(reduceShader)

// reduceMode is how a device's reductions plan and combine.
type reduceMode struct {
	// hardware picks planReduceHW; software adapters (type CPU: llvmpipe,
	// lavapipe) need planReduce's bounded loops.
	hardware bool
	// subgroups lets the lanes of sum, prod, max and min meet by subgroup
	// operations before the tree in workgroup memory.
	subgroups bool
}

// plan is the pass plan of rows of n elements under mode m; vec says the
// pass reads its rows as vec4s (only under the hardware plan).
func (m reduceMode) plan(rows, n, workgroup int, vec bool) reducePlan {
	switch {
	case m.hardware && vec:
		return planReduceHWVec(rows, n, workgroup)
	case m.hardware:
		return planReduceHW(rows, n, workgroup)
	}
	return planReduce(rows, n, workgroup)
}

// planReduceHWVec is the hardware plan of a vec4 pass (see
// reduceHWVecTargetTasks).
func planReduceHWVec(rows, n, workgroup int) reducePlan {
	return reduceBounds{reduceHWLaneWork, reduceHWMaxPerLane, reduceHWVecTargetTasks, reduceHWVecMinPerLane, reduceHWVecStep}.plan(rows, n, workgroup)
}

// planReduceHW is the plan for hardware adapters (see reduceHWTargetTasks).
func planReduceHW(rows, n, workgroup int) reducePlan {
	return reduceBounds{reduceHWLaneWork, reduceHWMaxPerLane, reduceHWTargetTasks, reduceHWMinPerLane, 1}.plan(rows, n, workgroup)
}

// planReduce is the plan for software adapters, whose loops stop at
// 65,535 iterations (see reduceMaxPerLane).
func planReduce(rows, n, workgroup int) reducePlan {
	return reduceBounds{reduceLaneWork, reduceMaxPerLane, reduceTargetTasks, reduceMinPerLane, 1}.plan(rows, n, workgroup)
}

// reduceBounds are the constants a plan is drawn by: lanes per row until
// each has laneWork elements; at most maxPerLane per lane; rows split
// toward targetTasks tasks, but not below minPerLane per lane; a segment
// holds a whole number of steps of step elements per lane.
type reduceBounds struct{ laneWork, maxPerLane, targetTasks, minPerLane, step int }

// plan covers rows of n elements in one pass under b.
func (b reduceBounds) plan(rows, n, workgroup int) reducePlan {
	lanes := 1
	for lanes*2 <= workgroup && lanes*b.laneWork < n {
		lanes *= 2
	}
	perLane := max(ceilDiv(n, lanes), 1)
	segs := ceilDiv(perLane, b.maxPerLane)
	if rows*segs < b.targetTasks {
		want := ceilDiv(b.targetTasks, rows)
		segs = max(segs, min(want, perLane/b.minPerLane))
	}
	segLen := ceilDiv(ceilDiv(perLane, segs), b.step) * b.step * lanes
	return reducePlan{lanes: lanes, segs: max(ceilDiv(n, segLen), 1), segLen: segLen}
}

// reducePlan is how one pass covers rows of n elements.
type reducePlan struct {
	lanes  int // invocations per task, a power of two ≤ the workgroup size
	segs   int // tasks per row
	segLen int // elements per task, a multiple of lanes
}

// reduceSource is what a pass reads: the caller's view, collapsed into kept
// (outer) and reduced (inner) axes, or the partials of an earlier pass. A
// dot source (MatMul's matrix-vector products) has a second operand with
// the same axes and its own strides; its inner axes are at most one.
type reduceSource struct {
	alloc               *device.Allocation
	dtype               string // WGSL type of the elements; "" for partials
	offset              int
	outer, outerStrides []int
	inner, innerStrides []int

	alloc2        *device.Allocation // the second operand of a dot, else nil
	offset2       int
	outerStrides2 []int
	innerStride2  int

	// indexBase is added to argmax's and argmin's element indices: the
	// row index of the source's first element when the source is a piece
	// of a longer row (chunk_reduce.go).
	indexBase int
}

// reduceShader is the data of shaders/reduce.wgsl.
type reduceShader struct {
	Op, Src, Dst, Acc, Enable   string
	Float, Arg, LSE, Dot, Scale bool
	Tree, InnerFlat, OuterFlat  bool
	// Block2 adds a second block level to an invocation's loop (the
	// hardware plan's long loops); Subgroup lets lanes meet by subgroup
	// operations (sum, prod, max, min where the device has subgroups).
	Block2, Subgroup bool
	// Vec4 reads the row as vec4s too (see shaders/reduce.wgsl): the
	// hardware plan's first pass over a typed source whose reduced
	// elements are contiguous, for every op but prod.
	Vec4          bool
	Words, Block  int
	WorkgroupSize int
}

// newReduceShader sets up the shader data of op over elements of dtype t.
func (d *Device) newReduceShader(op hal.ReduceOp, t hal.DType) reduceShader {
	sh := reduceShader{
		Op: op.String(), Acc: "f32", Float: t.IsFloat(), Arg: op == hal.ArgMax || op == hal.ArgMin,
		LSE: op == hal.LogSumExp, Words: 1, Block: reduceBlock, WorkgroupSize: d.workgroupSize(),
	}
	if !sh.Float {
		sh.Acc = "i32"
	}
	if sh.Arg || sh.LSE {
		sh.Words = 2
	}
	sh.Block2 = d.reduce.hardware
	sh.Subgroup = d.reduce.subgroups && !sh.Arg && !sh.LSE
	return sh
}

// Reduce folds the last `reduced` axes of src into dst.
func (d *Device) Reduce(op hal.ReduceOp, dst, src hal.View, reduced int) error {
	name := op.Kernel()
	if !slices.Contains(hal.ReduceOps, op) {
		return fmt.Errorf("webgpu: %v: %w", op, hal.ErrInvalid)
	}
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", name, hal.ErrClosed)
	}
	ops, err := d.chunkableOperands(name, dst, src)
	if err != nil {
		return err
	}
	out, in := ops[0], ops[1]
	if err := d.supports(name, in.DType); err != nil {
		return err
	}
	rank := len(in.Shape)
	if reduced < 0 || reduced > rank {
		return fmt.Errorf("webgpu: %s: cannot reduce the last %d axes of src %v: %w", name, reduced, in.View, hal.ErrInvalid)
	}
	want := in.DType
	if op == hal.ArgMax || op == hal.ArgMin {
		want = hal.Int32
	}
	switch {
	case out.DType != want:
		return fmt.Errorf("webgpu: %s of %v: dst is %v, want %v: %w", name, in.DType, out.DType, want, hal.ErrInvalid)
	case !slices.Equal(out.Shape, in.Shape[:rank-reduced]):
		return fmt.Errorf("webgpu: %s: dst %v is not src %v without its last %d axes: %w", name, out.View, in.View, reduced, hal.ErrInvalid)
	case !out.Contiguous():
		return fmt.Errorf("webgpu: %s: dst %v is not contiguous: %w", name, out.View, hal.ErrInvalid)
	}
	if err := independent(name, out, in); err != nil {
		return err
	}
	rows, n := out.Elements(), hal.View{Shape: in.Shape[rank-reduced:]}.Elements()
	if rows == 0 {
		return nil
	}
	if n == 0 && op != hal.Sum && op != hal.Prod && op != hal.LogSumExp {
		return fmt.Errorf("webgpu: %s: src %v has no elements to reduce over its last %d axes: %w", name, in.View, reduced, hal.ErrInvalid)
	}

	s := reduceSource{alloc: in.alloc, dtype: wgslType(in.DType), offset: in.Offset}
	var st [][]int
	s.outer, st = collapse(in.Shape[:rank-reduced], in.Strides[:rank-reduced])
	s.outerStrides = st[0]
	s.inner, st = collapse(in.Shape[rank-reduced:], in.Strides[rank-reduced:])
	s.innerStrides = st[0]
	if !d.withinBinding(out, in) {
		// Beyond one binding: in windows (chunk_reduce.go).
		return d.reduceChunked(op, s, rows, n, out, in, reduced)
	}
	if err := d.reduceRows(d.newReduceShader(op, in.DType), s, rows, n, out, 1, 0); err != nil {
		return fmt.Errorf("webgpu: %s of %v over %d axes: %w", name, in.View, reduced, err)
	}
	return nil
}

// reduceRows folds rows of n elements of s into the contiguous out, pass
// after pass until one leaves a single segment per row; with sh.Scale the
// final pass writes alpha·result + beta·out.
func (d *Device) reduceRows(sh reduceShader, s reduceSource, rows, n int, out operand, alpha, beta float64) error {
	return d.reduceRowsTo(sh, s, rows, n, out, false, alpha, beta)
}

// reduceRowsTo is reduceRows; with partial, the final pass writes each
// row's partial (sh.Words words, as an intermediate pass does) at the start
// of out.alloc instead of the finished value, for a later pass to fold
// (chunk_reduce.go).
func (d *Device) reduceRowsTo(sh reduceShader, s reduceSource, rows, n int, out operand, partial bool, alpha, beta float64) error {
	var partials hal.Buffer // the buffer s reads when it holds partials
	defer func() {
		if partials != nil {
			d.Free(partials)
		}
	}()
	for {
		pass := sh
		pass.Src, pass.Dst, pass.Dot, pass.Scale = s.dtype, "", s.alloc2 != nil, false
		// Products stay scalar: on the software adapters, where the tests
		// run, float products drift one way with the order of the
		// multiplications (see reduceHWTargetTasks), and the vec4 path's
		// pairwise products and more pieces drifted past the chunked
		// test's bound (4.4e-4 relative for 80K factors against 2e-4).
		pass.Vec4 = d.reduce.hardware && !reduceNoVec4 && s.dtype != "" && !pass.Dot &&
			sh.Op != hal.Prod.String() && len(s.inner) == 1 && s.innerStrides[0] == 1
		plan := d.reduce.plan(rows, n, sh.WorkgroupSize, pass.Vec4)
		target := out.alloc
		var next hal.Buffer
		if plan.segs == 1 {
			if !partial {
				pass.Dst, pass.Scale = wgslType(out.DType), sh.Scale
			}
		} else {
			var err error
			if next, err = d.Alloc(int64(rows) * int64(plan.segs) * int64(sh.Words) * 4); err != nil {
				return fmt.Errorf("partials: %w", err)
			}
			target = next.(*device.Buffer).Allocation()
		}
		if err := d.reducePass(pass, plan, rows, n, s, target, out.Offset, alpha, beta); err != nil {
			if next != nil {
				d.Free(next)
			}
			return err
		}
		if partials != nil {
			// Later uses of the memory are ordered after the pass just
			// recorded, so it can go back to the pool now.
			d.Free(partials)
		}
		if next == nil {
			partials = nil
			return nil
		}
		partials, n = next, plan.segs
		s = reduceSource{
			alloc: target, outer: []int{rows}, outerStrides: []int{n * sh.Words},
			inner: []int{n}, innerStrides: []int{sh.Words},
		}
	}
}

// reducePass records one pass: rows × plan.segs tasks over s, writing
// finished values at element dstOffset of target, or partials at its start.
func (d *Device) reducePass(sh reduceShader, plan reducePlan, rows, n int, s reduceSource, target *device.Allocation, dstOffset int, alpha, beta float64) error {
	sh.Enable = enableF16Types(sh.Src, sh.Dst)
	sh.Tree, sh.InnerFlat, sh.OuterFlat = plan.lanes > 1, len(s.inner) <= 1, len(s.outer) <= 1
	sh.Subgroup = sh.Subgroup && sh.Tree
	if sh.Subgroup {
		sh.Enable += "\nenable subgroups;"
	}
	// The shader data, every field, names the kernel.
	name := fmt.Sprintf("reduce%+v", sh)
	buffers := []*device.Allocation{target, s.alloc}
	switch {
	case sh.Dot:
		buffers = append(buffers, s.alloc2)
	case sh.Vec4:
		buffers = append(buffers, s.alloc) // bound again as src4
	}
	if reducePassHook != nil {
		reducePassHook(sh)
	}
	k, err := d.rt.Kernel(name, len(buffers), 1, func() (string, error) { return render("reduce.wgsl", sh) })
	if err != nil {
		return err
	}
	tasks := rows * plan.segs
	perGroup := sh.WorkgroupSize / plan.lanes
	x, y, err := d.grid(ceilDiv(tasks, perGroup))
	if err != nil {
		return err
	}
	var p params
	p.u32(uint32(tasks)).u32(uint32(plan.segs)).u32(uint32(n)).u32(uint32(plan.segLen)).
		u32(uint32(plan.lanes)).u32(x).u32(uint32(s.offset)).u32(uint32(dstOffset)).
		u32(uint32(len(s.outer))).u32(uint32(len(s.inner))).u32(uint32(s.offset2)).u32(uint32(s.innerStride2)).
		f32(float32(alpha)).f32(float32(beta)).u32(0).u32(uint32(s.indexBase)).
		vec8(s.outer, 1).vec8(s.outerStrides, 0).vec8(s.inner, 1).vec8(s.innerStrides, 0).vec8(s.outerStrides2, 0)
	d.record(dispatch{k: k, buffers: buffers, params: p, x: x, y: y, z: 1})
	return nil
}

// collapse rewrites the axes of one or more views of a common shape into
// an equivalent shape of lowest rank: axes of size 1 go, and an axis merges
// into the next when every view steps over it as one run of the next. The
// row-major order of elements is unchanged, so linear indices (argmax's,
// the kernels' unravel) mean the same before and after.
func collapse(shape []int, strides ...[]int) ([]int, [][]int) {
	out := make([]int, 0, len(shape))
	outStrides := make([][]int, len(strides))
	for i, d := range shape {
		if d == 1 {
			continue
		}
		last := len(out) - 1
		merge := last >= 0
		for v := range strides {
			if merge && outStrides[v][last] != strides[v][i]*d {
				merge = false
			}
		}
		if merge {
			out[last] *= d
			for v := range strides {
				outStrides[v][last] = strides[v][i]
			}
			continue
		}
		out = append(out, d)
		for v := range strides {
			outStrides[v] = append(outStrides[v], strides[v][i])
		}
	}
	return out, outStrides
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// or returns s, or fallback when s is empty.
func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// enableF16Types is enableF16 for kernels that know their WGSL types.
func enableF16Types(types ...string) string {
	if slices.Contains(types, "f16") {
		return enableF16(hal.Float16)
	}
	return ""
}
