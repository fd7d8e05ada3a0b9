{{/*
Softmax and log_softmax over the last axis: one workgroup per task, a task
being a row, or one segment of a long row.

Template parameters (backend/wgpu/softmax.go renders them):
  .Mode          "full": a task is a whole row: its max, then Σ e^(x−max),
                 then the outputs, each phase a strided loop over the row
                 followed by a tree in workgroup memory.
                 "stats": a task is a segment of a row; it writes the
                 segment's (max, Σ e^(x−max)) pair to dst.
                 "apply": a task is a segment again; it folds its row's
                 pairs from stats into the row's (max, sum) and writes its
                 segment's outputs.
  .Log           log_softmax, (x − max) − ln Σ, instead of e^(x−max) / Σ
  .Src           WGSL type of the elements (f32 or f16; f16 computes in f32)
  .Enable        "enable f16;" for f16
  .WorkgroupSize invocations per workgroup, a power of two

Why the shape of the kernel:
  - llvmpipe silently stops a shader's loops after 65,535 iterations per
    invocation in total. A full task loops 3·n/WorkgroupSize times; the
    host splits rows longer than a few thousand elements per invocation
    into segments (stats, then apply), whose loops stay as short.
  - exp_f and log_f from math.wgsl, not WGSL's exp and log (dozens of ulp
    off on llvmpipe). The max is NaN-propagating by bit tests (WGSL may
    assume no NaN), so a NaN makes its row NaN, as in torch; a row whose
    max is −Inf (all −Inf) is NaN too, written explicitly rather than left
    to −Inf − (−Inf).
*/}}
{{- .Enable}}

struct Params {
    tasks: u32,        // rows × segments
    n: u32,            // row length
    segs: u32,         // segments per row
    seg_len: u32,      // elements per segment
    grid_x: u32,       // workgroups per row of the 2-D grid
    src_offset: u32,
    dst_offset: u32,
    inner_stride: u32, // src's stride along the last axis
    outer_rank: u32,   // src's other axes, collapsed
    zero: u32,         // 0, for math.wgsl's math_zero
    outer_shape: array<vec4<u32>, 2>,
    outer_strides: array<vec4<u32>, 2>,
}

{{- if eq .Mode "stats"}}
@group(0) @binding(0) var<storage, read_write> dst: array<vec2<f32>>;
{{- else}}
@group(0) @binding(0) var<storage, read_write> dst: array<{{.Src}}>;
{{- end}}
@group(0) @binding(1) var<storage, read> src: array<{{.Src}}>;
{{- if eq .Mode "apply"}}
@group(0) @binding(2) var<storage, read> stats: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> params: Params;
{{- else}}
@group(0) @binding(2) var<uniform> params: Params;
{{- end}}

const WG: u32 = {{.WorkgroupSize}}u;

var<workgroup> tree: array<f32, WG>;

{{template "strided" .}}
{{template "math" .}}
{{- if eq .Src "f16"}}
{{template "to_f16"}}
{{- end}}

fn fmax(a: f32, b: f32) -> f32 {
    if (is_nan(a)) {
        return a;
    }
    if (is_nan(b)) {
        return b;
    }
    return max(a, b);
}

fn is_neg_inf(x: f32) -> bool {
    return is_inf(x) && sign_bit(x);
}

// tree_max and tree_sum combine one value per invocation; every
// invocation of the workgroup must call them.
fn tree_max(lid: u32, v: f32) -> f32 {
    tree[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s /= 2u) {
        if (lid < s) {
            tree[lid] = fmax(tree[lid], tree[lid + s]);
        }
        workgroupBarrier();
    }
    let r = tree[0];
    workgroupBarrier();
    return r;
}

fn tree_sum(lid: u32, v: f32) -> f32 {
    tree[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s /= 2u) {
        if (lid < s) {
            tree[lid] = tree[lid] + tree[lid + s];
        }
        workgroupBarrier();
    }
    let r = tree[0];
    workgroupBarrier();
    return r;
}

fn load(base: u32, j: u32) -> f32 {
    return f32(src[base + j * params.inner_stride]);
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    math_zero = params.zero;
    let task = wid.y * params.grid_x + wid.x;
    if (task >= params.tasks) {
        return; // uniform: the whole workgroup leaves
    }
    let row = task / params.segs;
    let start = (task % params.segs) * params.seg_len;
    let end = min(start + params.seg_len, params.n);
    let base = strided_at(unravel(row, params.outer_shape, params.outer_rank), params.outer_strides, params.src_offset);

{{- if eq .Mode "apply"}}
    var m = -inf_f32();
    for (var k = lid; k < params.segs; k += WG) {
        m = fmax(m, stats[row * params.segs + k].x);
    }
    m = tree_max(lid, m);
    var s = 0.0;
    for (var k = lid; k < params.segs; k += WG) {
        let p = stats[row * params.segs + k];
        if (!is_neg_inf(p.x)) {
            s += p.y * select(exp_f(p.x - m), 1.0, p.x == m);
        }
    }
    s = tree_sum(lid, s);
{{- else}}
    var m = -inf_f32();
    for (var j = start + lid; j < end; j += WG) {
        m = fmax(m, load(base, j));
    }
    m = tree_max(lid, m);
    var s = 0.0;
    if (!is_neg_inf(m)) {
        for (var j = start + lid; j < end; j += WG) {
            s += exp_f(load(base, j) - m);
        }
    }
    s = tree_sum(lid, s);
{{- end}}

{{- if eq .Mode "stats"}}
    if (lid == 0u) {
        dst[task] = vec2<f32>(m, s);
    }
{{- else}}
    let dead = is_neg_inf(m); // all −Inf: NaN
{{- if .Log}}
    let ls = log_f(s);
{{- end}}
    for (var j = start + lid; j < end; j += WG) {
        let x = load(base, j);
{{- if .Log}}
        var y = (x - m) - ls;
{{- else}}
        var y = exp_f(x - m) / s;
{{- end}}
        if (dead) {
            y = nan_f32();
        }
        dst[params.dst_offset + row * params.n + j] = {{if eq .Src "f16"}}to_f16(y){{else}}y{{end}};
    }
{{- end}}
}
