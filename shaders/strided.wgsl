{{/*
Shared WGSL helpers for strided (hal.View) indexing. This file only defines
templates; kernels include them with

    {{template "strided" .}}

anywhere at module scope (the argument is unused). All *.wgsl files are
parsed together, so the define is visible from every shader.

Uniform layout convention (backend/wgpu params encoder):
  - a shape or a set of strides is one `array<vec4<u32>, 2>` (params.vec8):
    axis k lives at [k / 4u][k % 4u]; shapes are padded with 1 and strides
    with 0 up to hal.MaxRank = 8, so padded axes contribute nothing;
  - views carry an element offset (a u32, in units of the view's dtype)
    that the kernel adds, because buffers are bound whole;
  - rank is a u32 ≤ 8; axes are row-major (axis rank−1 varies fastest);
  - typical struct:
        struct Params {
            n: u32, rank: u32, row_stride: u32, a_offset: u32,
            shape: array<vec4<u32>, 2>,
            a_strides: array<vec4<u32>, 2>,
        }
    (vec8 aligns itself to 16 bytes, so order scalars first.)

Functions defined by "strided":
  unravel(i, shape, rank) -> array<vec4<u32>, 2>
      the coordinates of row-major linear index i over shape (padded axes 0).
  strided_at(coords, strides, offset) -> u32
      the element offset Σ coords[k]·strides[k] + offset of one operand.
      Decompose once with unravel and call strided_at per operand: the
      divisions are the expensive part, the dot products are cheap.
  strided_offset(i, shape, strides, rank, offset) -> u32
      strided_at(unravel(i, shape, rank), strides, offset), for one operand.
  axis8(v, k) -> u32
      element k of a shape or strides array.

Cost and the llvmpipe loop trap: unravel loops `rank` times (≤ 8). llvmpipe
silently stops a shader's loops after 65,535 iterations per invocation in
total, so a kernel that calls unravel inside its own loop spends up to 8
iterations per call of that budget; bound the outer loop accordingly.

Speed: WGSL passes these arrays by value, and indexing a value array with a
runtime index makes the compiler copy it to private memory (per lane, on
llvmpipe). Measured on llvmpipe for a + b over 1M strided elements, that
halves the throughput of the index arithmetic compared with reading the
uniform buffer directly, which "strided_params" below does for kernels that
adopt its uniform layout.

"strided_params" (include with {{template "strided_params" .}}) defines
  strided_offsets(i) -> vec4<u32>
      the element offsets of up to four operands at row-major index i,
      reading the module-scope uniform `params`, which must have the fields
          rank: u32,
          offsets: vec4<u32>,                        // operand k's offset
          shape: array<vec4<u32>, 2>,
          strides: array<array<vec4<u32>, 2>, 4>,    // operand k's strides
      (unused operands: offset 0, strides 0). Loops rank − 1 times.
*/}}
{{- define "strided"}}
fn axis8(v: array<vec4<u32>, 2>, k: u32) -> u32 {
    var w = v;
    return w[k / 4u][k % 4u];
}

fn unravel(i: u32, shape: array<vec4<u32>, 2>, rank: u32) -> array<vec4<u32>, 2> {
    var s = shape;
    var c = array<vec4<u32>, 2>(vec4<u32>(0u), vec4<u32>(0u));
    var rem = i;
    for (var k = rank; k > 0u; k--) {
        let a = k - 1u;
        let dim = s[a / 4u][a % 4u];
        let q = rem / dim; // one division per axis: GPUs emulate it
        c[a / 4u][a % 4u] = rem - q * dim;
        rem = q;
    }
    return c;
}

fn strided_at(c: array<vec4<u32>, 2>, strides: array<vec4<u32>, 2>, offset: u32) -> u32 {
    return dot(c[0], strides[0]) + dot(c[1], strides[1]) + offset;
}

fn strided_offset(i: u32, shape: array<vec4<u32>, 2>, strides: array<vec4<u32>, 2>, rank: u32, offset: u32) -> u32 {
    return strided_at(unravel(i, shape, rank), strides, offset);
}
{{- end}}

{{- define "strided_params"}}
fn strided_offsets(i: u32) -> vec4<u32> {
    var at = params.offsets;
    var rem = i;
    // Axes rank−1 … 1 peel off a coordinate each; axis 0 takes what is
    // left, which is in range because i < the element count.
    for (var k = params.rank; k > 1u; k--) {
        let ax = k - 1u;
        let d = params.shape[ax / 4u][ax % 4u];
        let q = rem / d;
        let c = rem - q * d;
        at += c * vec4<u32>(params.strides[0][ax / 4u][ax % 4u], params.strides[1][ax / 4u][ax % 4u],
            params.strides[2][ax / 4u][ax % 4u], params.strides[3][ax / 4u][ax % 4u]);
        rem = q;
    }
    if (params.rank > 0u) {
        at += rem * vec4<u32>(params.strides[0][0].x, params.strides[1][0].x, params.strides[2][0].x, params.strides[3][0].x);
    }
    return at;
}
{{- end}}
