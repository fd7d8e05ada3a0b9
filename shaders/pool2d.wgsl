// 2-D max or average pooling of NCHW src [N, C, H, W] into dst
// [N, C, OH, OW], as torch.nn.functional.max_pool2d (with return_indices)
// and avg_pool2d.
//
// Template parameters (backend/wgpu/pool2d.go renders them):
//   .Enable        "enable f16;" when .T is f16, else empty
//   .T             WGSL type of the values: f32 or f16
//   .Max           true for max pooling (which also writes Int32 indices),
//                  false for average pooling
//   .WorkgroupSize invocations per workgroup
//
// One invocation per output element walks its KH×KW window, which
// pool2d.go keeps below llvmpipe's silent 65,535-iteration loop limit.
// Values are compared and summed in f32.
{{.Enable}}

struct Params {
    n: u32,             // elements of dst
    row_stride: u32,    // invocations per row of the 2-D dispatch grid
{{- template "window_params"}}
    count_include_pad: u32,
    dst_offset: u32,
    idx_offset: u32,
    src_offset: u32,
    src_strides: vec4<u32>,  // n, c, h, w
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{.T}}>;
{{- if .Max}}
@group(0) @binding(1) var<storage, read_write> indices: array<i32>;
@group(0) @binding(2) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(3) var<uniform> params: Params;
{{- else}}
@group(0) @binding(1) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(2) var<uniform> params: Params;
{{- end}}

// is_nan tests the bits: WGSL lets compilers assume floats are never NaN,
// so x != x may be folded away.
fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

{{- if not .Max}}
// ceil_div is ⌈a/b⌉ for b > 0 (WGSL's division truncates toward zero).
fn ceil_div(a: i32, b: i32) -> i32 {
    return select((a + b - 1) / b, a / b, a <= 0);
}

// taps counts the window positions start + k·dil, k in [0, k_size), that
// fall in [lo, hi).
fn taps(start: i32, dil: i32, k_size: u32, lo: i32, hi: i32) -> i32 {
    let first = max(ceil_div(lo - start, dil), 0);
    let end = min(ceil_div(hi - start, dil), i32(k_size));
    return max(end - first, 0);
}
{{- end}}

{{template "narrow" .}}
{{template "unravel_nchw"}}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- template "flat_index"}}
    let pos = unravel_nchw(i, params.channels, params.out_h, params.out_w);
    let n = pos.x;
    let c = pos.y;
    let oh = pos.z;
    let ow = pos.w;

    let s = params.src_strides;
    let plane = params.src_offset + n * s.x + c * s.y;
    // The window's top-left corner, possibly in the padding.
    let y0 = i32(oh * params.stride_h) - i32(params.pad_h);
    let x0 = i32(ow * params.stride_w) - i32(params.pad_w);
    let h = i32(params.height);
    let w = i32(params.width);
    let dh = i32(params.dil_h);
    let dw = i32(params.dil_w);
{{- if .Max}}

    // As PyTorch: start from −∞ at the first tap inside the input, replace
    // on a strictly greater value or on NaN (so NaN wins, the last one
    // giving the index). Taps in the padding are skipped: padding never
    // wins. Taking the first tap unconditionally is the same as starting
    // from −∞ and needs no infinity, which WGSL compilers may assume away;
    // −∞ (built at run time: a constant infinity is a shader error) is left
    // only for a window with no tap inside the input.
    var fy = y0;
    if (fy < 0) {
        fy += ((-fy + dh - 1) / dh) * dh;
    }
    var fx = x0;
    if (fx < 0) {
        fx += ((-fx + dw - 1) / dw) * dw;
    }
    var best = bitcast<f32>(0xff800000u | (params.n & 0u));
    var arg = fy * w + fx;
    var seen = false;
{{- else}}
    var sum = 0.0;
{{- end}}
    for (var ky = 0; ky < i32(params.kh); ky++) {
        let y = y0 + ky * dh;
        if (y < 0) {
            continue;
        }
        if (y >= h) {
            break;
        }
        for (var kx = 0; kx < i32(params.kw); kx++) {
            let x = x0 + kx * dw;
            if (x < 0) {
                continue;
            }
            if (x >= w) {
                break;
            }
            let v = f32(src[plane + u32(y) * s.z + u32(x) * s.w]);
{{- if .Max}}
            if (!seen || v > best || is_nan(v)) {
                best = v;
                arg = y * w + x;
                seen = true;
            }
{{- else}}
            sum += v;
{{- end}}
        }
    }
{{- if .Max}}
    dst[params.dst_offset + i] = narrow(best);
    indices[params.idx_offset + i] = arg;
{{- else}}
    // The divisor counts the window's taps inside the padded input
    // [−pad, size+pad) when counting padding, else inside the input: for
    // PyTorch's undilated windows, its window clipped to those ranges. A
    // window with no tap inside the input averages to 0, as in PyTorch.
    let inside = taps(y0, dh, params.kh, 0, h) * taps(x0, dw, params.kw, 0, w);
    if (inside == 0) {
        dst[params.dst_offset + i] = narrow(0.0);
        return;
    }
    var count = inside;
    if (params.count_include_pad != 0u) {
        count = taps(y0, dh, params.kh, -i32(params.pad_h), h + i32(params.pad_h)) *
            taps(x0, dw, params.kw, -i32(params.pad_w), w + i32(params.pad_w));
    }
    dst[params.dst_offset + i] = narrow(sum / f32(count));
{{- end}}
}
