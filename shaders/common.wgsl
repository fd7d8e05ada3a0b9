{{/*
Shared WGSL pieces of the one-invocation-per-element kernels. This file only
defines templates (all *.wgsl files are parsed together, see strided.wgsl);
none takes an argument.

"flat_index" (inside main, whose builtin is `id`) declares
    let i: u32
the invocation's linear index over a 2-D dispatch grid, and returns early
when i is past the element count. It reads the uniform fields
    n: u32,             // invocations that do work
    row_stride: u32,    // invocations per row of the 2-D dispatch grid

"window_params" (inside a Params struct) declares the geometry words of the
windowed NCHW kernels in the order backend/wgpu/window.go windowParams
encodes them: channels, height, width, kh, kw, out_h, out_w, stride_h,
stride_w, pad_h, pad_w, dil_h, dil_w.

"row_params" (at module scope) defines the Params struct of the kernels
over the rows of a last axis (softmax.wgsl, layernorm.wgsl) in the order
backend/wgpu/softmax.go's rowPasses encodes it; eps is LayerNorm's, and
for softmax the padding word before the arrays.

"unravel_nchw" (at module scope) defines
    unravel_nchw(i, channels, height, width) -> vec4<u32>
the coordinates (n, c, h, w) of row-major linear index i over
[N, channels, height, width].
*/}}
{{- define "flat_index"}}
    let i = id.y * params.row_stride + id.x;
    if (i >= params.n) {
        return;
    }
{{- end}}

{{- define "window_params"}}
    channels: u32,
    height: u32,
    width: u32,
    kh: u32,
    kw: u32,
    out_h: u32,
    out_w: u32,
    stride_h: u32,
    stride_w: u32,
    pad_h: u32,
    pad_w: u32,
    dil_h: u32,
    dil_w: u32,
{{- end}}

{{- define "unravel_nchw"}}
fn unravel_nchw(i: u32, channels: u32, height: u32, width: u32) -> vec4<u32> {
    var t = i;
    let w = t % width;
    t /= width;
    let h = t % height;
    t /= height;
    let c = t % channels;
    return vec4<u32>(t / channels, c, h, w);
}
{{- end}}

{{- /*
"axis_params" (inside a Params struct, after n and row_stride) declares the
words of the kernels that index one axis with an Int32 index tensor idx
(gather.wgsl, scatter.wgsl): rank, axis, axis_size (the size along axis of
the operand idx points into), the dst, src and idx element offsets, and
shape, idx's shape padded with 1 (see strided.wgsl). The operands' strides
follow it.
*/}}
{{- define "axis_params"}}
    rank: u32,
    axis: u32,
    axis_size: u32,
    dst_offset: u32,
    src_offset: u32,
    idx_offset: u32,
    shape: array<vec4<u32>, 2>,
{{- end}}

{{- define "row_params"}}
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
    eps: f32,          // LayerNorm's epsilon (softmax: padding)
    outer_shape: array<vec4<u32>, 2>,
    outer_strides: array<vec4<u32>, 2>,
}
{{- end}}
