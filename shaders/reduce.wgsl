{{/*
Reductions: each "task" folds one segment of one row of a strided source
into one value, written either to the destination (finalized, in its dtype)
or to a buffer of partials that a later pass folds again.

Template parameters (backend/wgpu/reduce.go renders them):
  .Op            sum, prod, max, min, argmax, argmin or logsumexp
  .Src           WGSL type of the source elements; "" when the source is a
                 buffer of partials from an earlier pass
  .Dst           WGSL type of the destination; "" when this pass writes
                 partials
  .Acc           the accumulator's scalar type: f32 for every float dtype
                 (f16 sums accumulate in f32), i32 for int32
  .Float         whether the values are floats: NaN handling, and math.wgsl
                 for is_nan, ±Inf, exp_f and log_f (WGSL's exp and log may
                 be off by dozens of ulp; llvmpipe's are)
  .Arg, .LSE     the accumulator is a (value, index) or a (max, Σexp) pair
  .Words         u32 words per partial: 1, or 2 for the pairs
  .Block         elements an invocation folds before merging them into its
                 running result (see below)
  .WorkgroupSize invocations per workgroup
  .Tree          whether lanes > 1, so that the lanes of a task meet in a
                 tree in workgroup memory (with one lane there is nothing to
                 combine: no barrier, no workgroup memory)
  .InnerFlat     the reduced axes collapsed to at most one, walked with one
                 stride; otherwise each element's offset is unravelled
  .OuterFlat     the same for the kept axes
                 (variants, not a branch on params: llvmpipe executes both
                 sides of even a uniform branch, which made a 1M-element sum
                 5× slower)
  .Dot           (sum only) the source is a product of two operands, src and
                 src2, sharing the row structure: element j of a row is
                 src[…]·src2[…], so a matrix-vector product is a sum
                 reduction (MatMul uses this for M = 1 or N = 1)
  .Scale         (final pass only) write alpha·result + beta·dst, reading
                 dst only when beta ≠ 0
  .Block2        a second block level: runs of .Block elements merge into a
                 run of runs, which merges into the result every .Block
                 runs (the hardware plan's long loops)
  .Subgroup      (sum, prod, max, min with .Tree) lanes first meet by
                 subgroup operations, then the subgroups' results in the
                 tree (see below)
  .Vec4          (hardware plan, first pass over a row-contiguous typed
                 source) the row is also bound as src4, vec4s of .Src:
                 each task reads a scalar head up to a 16-byte boundary,
                 then whole vec4s, four independent loads per lane per
                 loop step (16 elements), then the rest vec4 by vec4, and a
                 scalar tail (see below)
  .Enable        "enable f16;" when an f16 array is bound, and
                 "enable subgroups;" with .Subgroup

Why the shape of the kernel:
  - A workgroup runs params.lanes invocations per task and
    WorkgroupSize / lanes tasks side by side, so short rows still fill the
    workgroup. Lane l of a task reads elements start+l, start+l+lanes, …:
    neighbouring invocations read neighbouring elements.
  - Float sums: each invocation sums runs of .Block elements, adds the runs
    together and then the lanes meet in a binary tree in workgroup memory,
    so rounding error grows like .Block + (elements per lane)/.Block +
    log2(lanes) additions rather than with the row length (with .Block2,
    .Block + .Block + (elements per lane)/.Block²). Passes over partials
    add another tree level, never a long serial chain.
  - With .Subgroup, when a task's lanes span whole subgroups (lanes ≥ the
    subgroup size, read from the builtin: it varies by device), each
    subgroup folds its lanes with subgroupAdd/Mul/Max/Min and the tree in
    workgroup memory starts at a stride of the subgroup size. This takes
    subgroups to be consecutive runs of local_invocation_index, as Vulkan
    implementations (NVIDIA, AMD, Intel, Mesa) lay out a 1-D workgroup;
    WGSL does not promise it, so the host runs subgroup_probe.wgsl when
    it opens the device and takes this path only where it holds.
    Max and min keep NaN out of subgroupMax/Min (WGSL may assume no NaN):
    the NaN lanes' bits meet separately by an unsigned subgroupMax (any
    NaN's bits are nonzero) and win. A float subgroupAdd adds at most a
    subgroup's lanes (≤ 128), in whatever order the device does.
  - With .Vec4 (real GPUs): one scalar load at a time per lane leaves too
    few bytes in flight to reach a GPU's memory bandwidth (Little's law),
    so a lane issues four 16-byte loads before folding any of them. A
    float sum adds the four vec4s pairwise and then their components, so
    a step of 16 elements costs 4 levels of rounding, not 16. The head
    and tail (under 4 elements each, where a row's start or end is not
    16-byte aligned) read src as scalars: the binding's last vec4 may be
    partial, so src4 is only read where a whole vec4 lies inside the row.
  - llvmpipe silently stops a shader's loops after 65,535 iterations per
    invocation in total. The host bounds one segment to a few thousand
    elements per lane (plus up to 8 iterations per element in unravel for
    a source of several reduced axes), and rows longer than a segment take
    several passes.
  - Max and min propagate NaN; argmax and argmin let NaN win and keep the
    first index on ties, comparing indices explicitly because the lanes'
    elements interleave. logsumexp carries (running max m, Σ e^(x−m)) and
    updates it online with one exp per element; the result m + ln Σ is
    −Inf for an empty or all −Inf row and +Inf when any element is.
*/}}
{{- .Enable}}

struct Params {
    tasks: u32,       // rows × segments
    segs: u32,        // segments per row
    n: u32,           // row length (source elements, or partials)
    seg_len: u32,     // elements per segment
    lanes: u32,       // invocations per task, a power of two
    grid_x: u32,      // workgroups per row of the 2-D grid
    src_offset: u32,
    dst_offset: u32,
    outer_rank: u32,
    inner_rank: u32,
    src2_offset: u32,   // .Dot: the second operand
    inner_stride2: u32,
    alpha: f32,         // .Scale
    beta: f32,
    zero: u32,          // 0, for math.wgsl's math_zero
    arg_base: u32,      // added to source element indices (a piece of a row)
    outer_shape: array<vec4<u32>, 2>,   // the kept axes: one row each
    outer_strides: array<vec4<u32>, 2>,
    inner_shape: array<vec4<u32>, 2>,   // the reduced axes
    inner_strides: array<vec4<u32>, 2>,
    outer_strides2: array<vec4<u32>, 2>, // .Dot
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{if .Dst}}{{.Dst}}{{else}}u32{{end}}>;
@group(0) @binding(1) var<storage, read> src: array<{{if .Src}}{{.Src}}{{else}}u32{{end}}>;
{{- if .Dot}}
@group(0) @binding(2) var<storage, read> src2: array<{{.Src}}>;
@group(0) @binding(3) var<uniform> params: Params;
{{- else if .Vec4}}
@group(0) @binding(2) var<storage, read> src4: array<vec4<{{.Src}}>>; // src again, as vec4s
@group(0) @binding(3) var<uniform> params: Params;
{{- else}}
@group(0) @binding(2) var<uniform> params: Params;
{{- end}}

const WG: u32 = {{.WorkgroupSize}}u;
const BLOCK: u32 = {{.Block}}u;

struct Acc {
    v: {{.Acc}},
{{- if .Arg}}
    i: u32,   // row index of v
{{- else if .LSE}}
    s: f32,   // Σ e^(x − v) over the elements folded so far
{{- end}}
}

{{- if .Tree}}

var<workgroup> tree: array<Acc, WG>;
{{- end}}
{{- if .Subgroup}}

var<workgroup> sg_width: u32;

// subgroup_fold folds v over the invocation's subgroup.
fn subgroup_fold(v: {{.Acc}}) -> {{.Acc}} {
{{- if eq .Op "sum"}}
    return subgroupAdd(v);
{{- else if eq .Op "prod"}}
    return subgroupMul(v);
{{- else if .Float}}
    let nan = is_nan(v);
    let nan_bits = subgroupMax(select(0u, bitcast<u32>(v), nan));
    let m = subgroup{{if eq .Op "max"}}Max{{else}}Min{{end}}(select(v, {{if eq .Op "min"}}{{else}}-{{end}}inf_f32(), nan));
    return select(m, bitcast<f32>(nan_bits), nan_bits != 0u);
{{- else}}
    return subgroup{{if eq .Op "max"}}Max{{else}}Min{{end}}(v);
{{- end}}
}
{{- end}}

{{template "strided" .}}
{{- if .Float}}
{{/* is_nan (a bit test: compilers may fold x != x), inf_f32, exp_f, log_f */}}
{{template "math" .}}
{{- end}}

fn identity() -> Acc {
{{- if eq .Op "sum"}}
    return Acc({{.Acc}}(0));
{{- else if eq .Op "prod"}}
    return Acc({{.Acc}}(1));
{{- else if .LSE}}
    return Acc(-inf_f32(), 0.0);
{{- else}}
    // An extreme value that every element ties or beats{{if .Arg}}, at an index
    // every real index precedes{{end}}.
{{- $low := or (eq .Op "max") (eq .Op "argmax")}}
{{- if .Float}}
    return Acc({{if $low}}-{{end}}inf_f32(){{if .Arg}}, 0xffffffffu{{end}});
{{- else}}
    return Acc(bitcast<i32>({{if $low}}0x80000000u{{else}}0x7fffffffu{{end}}){{if .Arg}}, 0xffffffffu{{end}});
{{- end}}
{{- end}}
}
{{- if .Arg}}

// wins reports whether (bv, bi) replaces (av, ai): NaN beats everything,
// then the {{if eq .Op "argmax"}}larger{{else}}smaller{{end}} value, then the smaller index.
fn wins(bv: {{.Acc}}, bi: u32, av: {{.Acc}}, ai: u32) -> bool {
{{- if .Float}}
    let bn = is_nan(bv);
    let an = is_nan(av);
    if (bn || an) {
        return bn && (!an || bi < ai);
    }
{{- end}}
    if (bv == av) {
        return bi < ai;
    }
    return bv {{if eq .Op "argmax"}}>{{else}}<{{end}} av;
}
{{- end}}

fn merge(a: Acc, b: Acc) -> Acc {
{{- if eq .Op "sum"}}
    return Acc(a.v + b.v);
{{- else if eq .Op "prod"}}
    return Acc(a.v * b.v);
{{- else if .Arg}}
    if (wins(b.v, b.i, a.v, a.i)) {
        return b;
    }
    return a;
{{- else if .LSE}}
    // Neither max is NaN (NaN lives in s). Equal maxes scale by exactly 1,
    // which also keeps ±Inf − ±Inf out of exp.
    let m = max(a.v, b.v);
    let fa = select(exp_f(a.v - m), 1.0, a.v == m);
    let fb = select(exp_f(b.v - m), 1.0, b.v == m);
    return Acc(m, a.s * fa + b.s * fb);
{{- else}}
{{- if .Float}}
    if (is_nan(a.v)) {
        return a;
    }
    if (is_nan(b.v)) {
        return b;
    }
{{- end}}
    return Acc({{.Op}}(a.v, b.v));
{{- end}}
}

// push folds element x at row index j into acc.
fn push(acc: Acc, x: {{.Acc}}, j: u32) -> Acc {
{{- if .LSE}}
    if (x == -inf_f32()) {
        return acc; // e^−Inf adds nothing
    }
    if (x > acc.v) {
        return Acc(x, acc.s * exp_f(acc.v - x) + 1.0);
    }
    // x == v covers +Inf, where exp(x − v) would be exp(NaN). NaN x makes s NaN.
    return Acc(acc.v, acc.s + select(exp_f(x - acc.v), 1.0, x == acc.v));
{{- else}}
    return merge(acc, Acc(x{{if .Arg}}, j{{end}}));
{{- end}}
}

// element folds the row's element j, whose row starts at src[base] (and
// src2[base2]).
fn element(acc: Acc, base: u32, base2: u32, j: u32) -> Acc {
{{- if .InnerFlat}}
    let off = base + j * params.inner_strides[0].x;
{{- else}}
    let off = base + strided_offset(j, params.inner_shape, params.inner_strides, params.inner_rank, 0u);
{{- end}}
{{- if .Dot}}
    return push(acc, f32(src[off]) * f32(src2[base2 + j * params.inner_stride2]), j);
{{- else if .Src}}
    return push(acc, {{.Acc}}(src[off]), j + params.arg_base);
{{- else}}
    return merge(acc, Acc(bitcast<{{.Acc}}>(src[off]){{if .Arg}}, src[off + 1u]{{else if .LSE}}, bitcast<f32>(src[off + 1u]){{end}}));
{{- end}}
}
{{- if .Vec4}}

// fold4 folds the vec4 x, the row's elements j … j+3, into acc.
fn fold4(acc: Acc, x: vec4<{{.Src}}>, j: u32) -> Acc {
    let y = vec4<{{.Acc}}>(x);
{{- if or (eq .Op "sum") (eq .Op "prod")}}
{{- $o := "+"}}{{if eq .Op "prod"}}{{$o = "*"}}{{end}}
    return Acc(acc.v {{$o}} ((y.x {{$o}} y.y) {{$o}} (y.z {{$o}} y.w)));
{{- else}}
    let k = j + params.arg_base;
    return push(push(push(push(acc, y.x, k), y.y, k + 1u), y.z, k + 2u), y.w, k + 3u);
{{- end}}
}

// fold16 folds four vec4s, the row's elements j + i·stride … (i = 0…3),
// into acc.
fn fold16(acc: Acc, x0: vec4<{{.Src}}>, x1: vec4<{{.Src}}>, x2: vec4<{{.Src}}>, x3: vec4<{{.Src}}>, j: u32, stride: u32) -> Acc {
{{- if or (eq .Op "sum") (eq .Op "prod")}}
{{- $o := "+"}}{{if eq .Op "prod"}}{{$o = "*"}}{{end}}
    let y = (vec4<{{.Acc}}>(x0) {{$o}} vec4<{{.Acc}}>(x1)) {{$o}} (vec4<{{.Acc}}>(x2) {{$o}} vec4<{{.Acc}}>(x3));
    return Acc(acc.v {{$o}} ((y.x {{$o}} y.y) {{$o}} (y.z {{$o}} y.w)));
{{- else}}
    return fold4(fold4(fold4(fold4(acc, x0, j), x1, j + stride), x2, j + 2u * stride), x3, j + 3u * stride);
{{- end}}
}
{{- end}}
{{- if eq .Dst "f16"}}
{{template "to_f16"}}
{{- end}}

fn finish(o: u32, acc: Acc) {
{{- if not .Dst}}
    dst[o * {{.Words}}u] = bitcast<u32>(acc.v);
{{- if .Arg}}
    dst[o * 2u + 1u] = acc.i;
{{- else if .LSE}}
    dst[o * 2u + 1u] = bitcast<u32>(acc.s);
{{- end}}
{{- else}}
{{- $v := "acc.v"}}
{{- if .Arg}}{{$v = "i32(acc.i)"}}{{else if .LSE}}{{$v = "acc.v + log_f(acc.s)"}}{{end}}
    let i = params.dst_offset + o;
{{- if .Scale}}
    var v = params.alpha * {{$v}};
    if (params.beta != 0.0) {
        v += params.beta * f32(dst[i]);
    }
{{- $v = "v"}}
{{- end}}
    dst[i] = {{if eq .Dst "f16"}}to_f16({{$v}}){{else}}{{$v}}{{end}};
{{- end}}
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32{{if .Subgroup}}, @builtin(subgroup_size) sg_size: u32{{end}}) {
{{- if .Float}}
    math_zero = params.zero;
{{- end}}
    let per_group = WG / params.lanes;
    let slot = lid / params.lanes;
    let lane = lid % params.lanes;
    let task = (wid.y * params.grid_x + wid.x) * per_group + slot;
    // Invocations without a task still take part in the tree (barriers
    // must be reached by the whole workgroup); they fold nothing.
    let live = slot < per_group && task < params.tasks;

    var acc = identity();
    if (live) {
        let row = task / params.segs;
        let start = (task % params.segs) * params.seg_len;
        let end = min(start + params.seg_len, params.n);
{{- if .OuterFlat}}
        let base = params.src_offset + row * params.outer_strides[0].x;
        let base2 = params.src2_offset + row * params.outer_strides2[0].x;
{{- else}}
        let coords = unravel(row, params.outer_shape, params.outer_rank);
        let base = strided_at(coords, params.outer_strides, params.src_offset);
        let base2 = strided_at(coords, params.outer_strides2, params.src2_offset);
{{- end}}
        var run = identity();
        var count = 0u;
{{- if .Block2}}
        var runs = identity();
        var count2 = 0u;
{{- end}}
{{- if .Vec4}}
        // src[lo, hi) is the segment: scalars up to the first 16-byte
        // boundary, vec4s src4[v0, v1), scalars from element 4·v1.
        let lo = base + start;
        let hi = base + end;
        let v0 = (lo + 3u) / 4u;
        let v1 = max(hi / 4u, v0);
        let l = params.lanes;
        for (var a = lo + lane; a < min(v0 * 4u, hi); a += l) {
            run = element(run, base, base2, a - base);
            count++;
{{- template "reduce_block" .}}
        }
        var vi = v0 + lane;
        for (; vi + 3u * l < v1; vi += 4u * l) {
            let x0 = src4[vi];
            let x1 = src4[vi + l];
            let x2 = src4[vi + 2u * l];
            let x3 = src4[vi + 3u * l];
            run = fold16(run, x0, x1, x2, x3, vi * 4u - base, l * 4u);
            count += 16u;
{{- template "reduce_block" .}}
        }
        for (; vi < v1; vi += l) {
            run = fold4(run, src4[vi], vi * 4u - base);
            count += 4u;
{{- template "reduce_block" .}}
        }
        for (var a = max(v1 * 4u, lo) + lane; a < hi; a += l) {
            run = element(run, base, base2, a - base);
            count++;
{{- template "reduce_block" .}}
        }
{{- else}}
        for (var j = start + lane; j < end; j += params.lanes) {
            run = element(run, base, base2, j);
            count++;
{{- template "reduce_block" .}}
        }
{{- end}}
{{- if .Block2}}
        acc = merge(acc, merge(runs, run));
{{- else}}
        acc = merge(acc, run);
{{- end}}
    }

{{- if .Subgroup}}
    // The tree's strides below stop are done by the subgroups: every lane
    // of a subgroup then holds its subgroup's result.
    if (lid == 0u) {
        sg_width = sg_size;
    }
    let width = workgroupUniformLoad(&sg_width);
    var stop = 1u;
    if (params.lanes >= width) {
        acc.v = subgroup_fold(acc.v);
        stop = width;
    }
{{- end}}
{{- if .Tree}}
    tree[lid] = acc;
    workgroupBarrier();
    for (var s = params.lanes / 2u; s >= {{if .Subgroup}}stop{{else}}1u{{end}}; s /= 2u) {
        if (slot < per_group && lane < s) {
            tree[lid] = merge(tree[lid], tree[lid + s]);
        }
        workgroupBarrier();
    }
    if (live && lane == 0u) {
        finish(task, tree[lid]);
    }
{{- else}}
    if (live) {
        finish(task, acc);
    }
{{- end}}
}

{{- define "reduce_block"}}
            if (count >= BLOCK) {
{{- if .Block2}}
                runs = merge(runs, run);
                count2++;
                if (count2 == BLOCK) {
                    acc = merge(acc, runs);
                    runs = identity();
                    count2 = 0u;
                }
{{- else}}
                acc = merge(acc, run);
{{- end}}
                run = identity();
                count = 0u;
            }
{{- end}}

{{- define "to_f16"}}
// to_f16 rounds x to float16 as IEEE-754 does: beyond f16's range (from
// 65520, halfway between 65504 and 2¹⁶) to ±Inf, and NaN to NaN, where WGSL
// leaves the plain conversion undefined. The special values are built from
// x's bits: a constant NaN or Inf is a shader-creation error.
fn to_f16(x: f32) -> f16 {
    let bits = bitcast<u32>(x);
    let sign = (bits >> 16u) & 0x8000u;
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        return bitcast<vec2<f16>>(sign | 0x7e00u).x;
    }
    if (abs(x) >= 65520.0) {
        return bitcast<vec2<f16>>(sign | 0x7c00u).x;
    }
    return f16(x);
}
{{- end}}
