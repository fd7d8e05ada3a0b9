{{/*
Inclusive scans along the last axis (hal.Device.Scan): cumsum, cumprod,
logcumsumexp, as reduce-then-scan over chunks of a row.

Template parameters (backend/wgpu/scan.go renders them):
  .Mode   "reduce": a task is one chunk of params.chunk_len elements of a
                    row; it folds its chunk into totals[task].
          "scan":   a task is a chunk again; it scans its chunk
                    sequentially into dst, starting from its carry: the
                    identity for a row's first chunk, else (with .Carry) the
                    inclusive scan of the row's chunk totals up to the
                    chunk before it, which the host computed from the
                    "reduce" totals by the same two passes, one level up.
  .Op     "cumsum", "cumprod" or "logcumsumexp"
  .Src    WGSL type of src; .Dst of dst; .Acc the type computed in (f32
          for the floats, f16 included; i32 for Int32, which wraps)
  .Carry  whether a prefix buffer of carries is bound
  .Enable "enable f16;" when a buffer is f16

Why the shape of the kernel:
  - llvmpipe silently stops a shader's loops after 65,535 iterations per
    invocation. A task loops over one chunk (a few hundred elements), and a
    row of any length is cut into chunks; their totals form a shorter row
    that the host scans by the same kernel, recursively, before the final
    pass.
  - Each output is rounded once: the final pass rescans its chunk from the
    carry rather than adding a carry to stored partial results, so a
    float16 output is the f32 prefix rounded once.
  - A float32 cumsum's rounding depends on the order of additions, which
    differs from a sequential loop (chunk totals are added first); the
    error is bounded by the prefix's Σ|x| times a few ulp per level.
  - logcumsumexp adds ln(1 + e^(lo−hi)) to the larger term hi, with
    math.wgsl's exp_f and log1p_f (the builtins are far less accurate on
    llvmpipe); two equal infinities are their own sum, so a prefix of −Inf
    stays −Inf instead of −Inf − (−Inf) = NaN. NaN is tested on the bits
    (WGSL may assume there is none) and propagates.
*/}}
{{- .Enable}}

struct Params {
    tasks: u32,        // rows × chunks
    n: u32,            // row length
    chunks: u32,       // chunks per row
    chunk_len: u32,    // elements per chunk
    grid_x: u32,       // workgroups per row of the 2-D grid
    src_offset: u32,
    dst_offset: u32,
    inner_stride: u32, // src's stride along the last axis
    outer_rank: u32,   // src's other axes, collapsed
    zero: u32,         // 0, for math.wgsl's math_zero
    outer_shape: array<vec4<u32>, 2>,
    outer_strides: array<vec4<u32>, 2>,
}

{{- if eq .Mode "reduce"}}
@group(0) @binding(0) var<storage, read_write> totals: array<{{.Acc}}>;
@group(0) @binding(1) var<storage, read> src: array<{{.Src}}>;
@group(0) @binding(2) var<uniform> params: Params;
{{- else}}
@group(0) @binding(0) var<storage, read_write> dst: array<{{.Dst}}>;
@group(0) @binding(1) var<storage, read> src: array<{{.Src}}>;
{{- if .Carry}}
@group(0) @binding(2) var<storage, read> prefix: array<{{.Acc}}>;
@group(0) @binding(3) var<uniform> params: Params;
{{- else}}
@group(0) @binding(2) var<uniform> params: Params;
{{- end}}
{{- end}}

{{template "strided" .}}
{{template "math" .}}
{{- if eq .Dst "f16"}}
{{template "to_f16"}}
{{- end}}

fn identity() -> {{.Acc}} {
{{- if eq .Op "cumprod"}}
    return {{.Acc}}(1);
{{- else if eq .Op "logcumsumexp"}}
    return -inf_f32();
{{- else}}
    return {{.Acc}}(0);
{{- end}}
}

fn combine(a: {{.Acc}}, b: {{.Acc}}) -> {{.Acc}} {
{{- if eq .Op "cumprod"}}
    return a * b;
{{- else if eq .Op "logcumsumexp"}}
    if (is_nan(a) || is_nan(b)) {
        return nan_f32();
    }
    let hi = max(a, b);
    let lo = min(a, b);
    if (is_inf(hi) && bitcast<u32>(hi) == bitcast<u32>(lo)) {
        return hi; // two equal infinities: see the header
    }
    return hi + log1p_f(exp_f(lo - hi));
{{- else}}
    return a + b;
{{- end}}
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    math_zero = params.zero;
    let task = (wid.y * params.grid_x + wid.x) * 64u + lid;
    if (task >= params.tasks) {
        return;
    }
    let row = task / params.chunks;
    let chunk = task % params.chunks;
    let start = chunk * params.chunk_len;
    let end = min(start + params.chunk_len, params.n);
    let base = strided_at(unravel(row, params.outer_shape, params.outer_rank), params.outer_strides, params.src_offset);
    var acc = identity();
{{- if .Carry}}
    if (chunk > 0u) {
        acc = prefix[task - 1u];
    }
{{- end}}
    for (var j = start; j < end; j++) {
        acc = combine(acc, {{.Acc}}(src[base + j * params.inner_stride]));
{{- if eq .Mode "scan"}}
        dst[params.dst_offset + row * params.n + j] = {{if eq .Dst "f16"}}to_f16(acc){{else}}acc{{end}};
{{- end}}
    }
{{- if eq .Mode "reduce"}}
    totals[task] = acc;
{{- end}}
}
