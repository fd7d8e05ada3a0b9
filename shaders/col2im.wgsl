// Col2im, as torch.nn.functional.fold: columns src [N, C·KH·KW, OH·OW] are
// summed back into images dst [N, C, H, W], the adjoint of im2col.wgsl.
//
// Template parameters (backend/wgpu/conv.go renders them):
//   .Enable        "enable f16;" when .T is f16, else empty
//   .T             WGSL type of the values: f32 or f16
//   .WorkgroupSize invocations per workgroup
//
// Gather form: one invocation per pixel of dst sums the column entries that
// map to it, so no two invocations write one element, no atomics are
// needed, and the result is deterministic. Pixel (y, x) receives kernel tap
// (kh, kw) of output position (oh, ow) when y + PH − kh·DH = oh·SH and
// x + PW − kw·DW = ow·SW. The loops walk the taps in PyTorch's order (kh,
// then kw, ascending), at most KH + KH·KW iterations, which conv.go keeps
// below llvmpipe's silent 65,535-iteration limit. Sums are in f32.
{{.Enable}}

struct Params {
    n: u32,             // elements of dst
    row_stride: u32,    // invocations per row of the 2-D dispatch grid
{{- template "window_params"}}
    dst_offset: u32,
    src_offset: u32,
    src_strides: vec4<u32>,  // n, row, column (w unused)
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{.T}}>;
@group(0) @binding(1) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(2) var<uniform> params: Params;

{{template "narrow" .}}
{{template "unravel_nchw"}}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- template "flat_index"}}
    let pos = unravel_nchw(i, params.channels, params.height, params.width);
    let n = pos.x;
    let c = pos.y;
    let y = pos.z;
    let x = pos.w;

    let s = params.src_strides;
    let base = params.src_offset + n * s.x;
    var sum = 0.0;
    for (var ky = 0u; ky < params.kh; ky++) {
        // py = oh·SH for the output row that tap ky of pixel row y belongs
        // to; it only falls as ky grows, so a negative one ends the loop.
        let py = i32(y + params.pad_h) - i32(ky * params.dil_h);
        if (py < 0) {
            break;
        }
        if (u32(py) % params.stride_h != 0u) {
            continue;
        }
        let oh = u32(py) / params.stride_h;
        if (oh >= params.out_h) {
            continue;
        }
        for (var kx = 0u; kx < params.kw; kx++) {
            let px = i32(x + params.pad_w) - i32(kx * params.dil_w);
            if (px < 0) {
                break;
            }
            if (u32(px) % params.stride_w != 0u) {
                continue;
            }
            let ow = u32(px) / params.stride_w;
            if (ow >= params.out_w) {
                continue;
            }
            let row = (c * params.kh + ky) * params.kw + kx;
            sum += f32(src[base + row * s.y + (oh * params.out_w + ow) * s.z]);
        }
    }
    dst[params.dst_offset + i] = narrow(sum);
}
