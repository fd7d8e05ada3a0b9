{{/*
Layer normalisation over the last axis: y = (x − mean)·inverseSqrt(var + eps)
per row, the mean and the biased variance two-pass (the variance sums the
squares of the centered values, so a large mean does not cancel it away).
One workgroup per task, a task being a row, or one segment of a long row.

Template parameters (backend/wgpu/layernorm.go renders them):
  .Mode          "row": a task is a whole row: Σx, then Σ(x − mean)², then
                 the outputs, three reads of a row that stays in cache.
                 "stats" (software adapters, rows past the loop cap): a
                 task is a segment of a row; it writes the segment's
                 (Σx, Σ(x − mean)²) pair to dst, mean being the
                 segment's. (Writing the mean instead made the squares
                 come out as Σx² on llvmpipe's GLES driver: the second
                 loop read a mean of 0.)
                 "apply": a task is a segment again; it merges its row's
                 pairs into the row's mean and variance (Chan et al.: the
                 segments' squares plus count·(segment mean − mean)²) and
                 writes its segment's outputs.
  .Vec4          "row", f32: src and dst bound as vec4s; the host takes it
                 when every row starts on a 16-byte boundary in both, is
                 contiguous and whole vec4s (llvmpipe and lavapipe load a
                 scalar per lane, so a vec4 moves four elements per load)
  .Src           WGSL type of the elements (f32 or f16; f16 computes in f32
                 and rounds once, by to_f16)
  .Enable        "enable f16;" for f16
  .WorkgroupSize invocations per workgroup, a power of two: 8 on software
                 adapters (one SIMD group of llvmpipe: its barriers switch
                 every group of the workgroup, see softmax.go), the
                 device's one-dimensional size on GPUs
  .Subgroups     tree_sum (softmax.wgsl) folds each subgroup by subgroupAdd
                 and the subgroups through one slot each

Why the shape of the kernel:
  - llvmpipe stops a shader's loops after 65,535 iterations per invocation
    in total, so on software adapters the host splits rows of more than a
    few thousand elements per invocation into segments (stats, then apply),
    as softmax does.
  - A row holding a NaN or an infinity is NaN, as torch's: the sum's bits
    say it (an infinity makes the sum ±Inf or NaN), tested as bits because
    WGSL may assume no NaN or Inf in arithmetic.
  - tree_sum with subgroups writes tree once per call, so a barrier
    separates the two sums.
*/}}
{{- .Enable}}
{{- if .Subgroups}}
enable subgroups;
{{- end}}

{{template "row_params"}}

{{- if eq .Mode "stats"}}
@group(0) @binding(0) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> src: array<{{.Src}}>;
@group(0) @binding(2) var<uniform> params: Params;
{{- else if .Vec4}}
@group(0) @binding(0) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: Params;
{{- else}}
@group(0) @binding(0) var<storage, read_write> dst: array<{{.Src}}>;
@group(0) @binding(1) var<storage, read> src: array<{{.Src}}>;
{{- if eq .Mode "apply"}}
@group(0) @binding(2) var<storage, read> stats: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> params: Params;
{{- else}}
@group(0) @binding(2) var<uniform> params: Params;
{{- end}}
{{- end}}

const WG: u32 = {{.WorkgroupSize}}u;

var<workgroup> tree: array<f32, WG>;
{{- if .Subgroups}}
var<private> sg_rank: u32;  // this invocation's rank among its subgroup's
var<private> sg_count: u32; // its subgroup's active invocations
{{- end}}

{{template "strided" .}}
{{template "math" .}}
{{- if eq .Src "f16"}}
{{template "to_f16"}}
{{- end}}
{{template "tree_sum" .}}

// finite_sum reports whether a sum of the row's values is finite: no NaN
// or infinity among them (nor an overflow).
fn finite_sum(s: f32) -> bool {
    return (bitcast<u32>(s) & 0x7fffffffu) < 0x7f800000u;
}

// sum4 adds a vec4's lanes pairwise.
fn sum4(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}

{{- if not .Vec4}}

fn load(base: u32, j: u32) -> f32 {
    return f32(src[base + j * params.inner_stride]);
}
{{- end}}

// fold returns the workgroup's sum of v, leaving tree free for another
// call.
fn fold(lid: u32, v: f32) -> f32 {
    let s = tree_sum(lid, v);
{{- if .Subgroups}}
    workgroupBarrier();
{{- end}}
    return s;
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    math_zero = params.zero;
{{- if .Subgroups}}
    sg_rank = subgroupExclusiveAdd(1u);
    sg_count = subgroupAdd(1u);
{{- end}}
    let task = wid.y * params.grid_x + wid.x;
    if (task >= params.tasks) {
        return; // uniform: the whole workgroup leaves
    }
    let row = task / params.segs;
    let start = (task % params.segs) * params.seg_len;
    let end = min(start + params.seg_len, params.n);
    let base = strided_at(unravel(row, params.outer_shape, params.outer_rank), params.outer_strides, params.src_offset);
    let out_at = params.dst_offset + row * params.n;
{{- if .Vec4}}
    let units = params.n / 4u;
    let src4 = base / 4u;
    let dst4 = out_at / 4u;
    var s4 = vec4<f32>(0.0);
    for (var i = lid; i < units; i += WG) {
        s4 += src[src4 + i];
    }
    let total = fold(lid, sum4(s4));
    let mean = total / f32(params.n);
    var q4 = vec4<f32>(0.0);
    for (var i = lid; i < units; i += WG) {
        let d = src[src4 + i] - vec4<f32>(mean);
        q4 += d * d;
    }
    let r = inverseSqrt(fold(lid, sum4(q4)) / f32(params.n) + params.eps);
    let dead = !finite_sum(total);
    for (var i = lid; i < units; i += WG) {
        let y = (src[src4 + i] - vec4<f32>(mean)) * r;
        dst[dst4 + i] = select(y, vec4<f32>(nan_f32()), dead);
    }
{{- else if eq .Mode "apply"}}
    // The row's mean from its segments' sums, then its squares: each
    // segment's own plus its count times its mean's squared distance from
    // the row's (exact in real arithmetic, and as stable as two passes).
    let n = f32(params.n);
    var s = 0.0;
    for (var k = lid; k < params.segs; k += WG) {
        s += stats[row * params.segs + k].x;
    }
    let total = fold(lid, s);
    let mean = total / n;
    var q = 0.0;
    for (var k = lid; k < params.segs; k += WG) {
        let count = f32(min(params.seg_len, params.n - k * params.seg_len));
        let p = stats[row * params.segs + k];
        let d = p.x / count - mean;
        q += p.y + count * d * d;
    }
    let r = inverseSqrt(fold(lid, q) / n + params.eps);
    let dead = !finite_sum(total) || !finite_sum(q);
    for (var j = start + lid; j < end; j += WG) {
        let y = select((load(base, j) - mean) * r, nan_f32(), dead);
        dst[out_at + j] = {{if eq .Src "f16"}}to_f16(y){{else}}y{{end}};
    }
{{- else}}
    var s = 0.0;
    for (var j = start + lid; j < end; j += WG) {
        s += load(base, j);
    }
    let total = fold(lid, s);
    let mean = total / f32(end - start);
    var q = 0.0;
    for (var j = start + lid; j < end; j += WG) {
        let d = load(base, j) - mean;
        q += d * d;
    }
    let squares = fold(lid, q);
{{- if eq .Mode "stats"}}
    if (lid == 0u) {
        dst[task] = vec2<f32>(total, squares);
    }
{{- else}}
    let r = inverseSqrt(squares / f32(params.n) + params.eps);
    let dead = !finite_sum(total);
    for (var j = start + lid; j < end; j += WG) {
        let y = select((load(base, j) - mean) * r, nan_f32(), dead);
        dst[out_at + j] = {{if eq .Src "f16"}}to_f16(y){{else}}y{{end}};
    }
{{- end}}
{{- end}}
}
