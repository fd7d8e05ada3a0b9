// Bilinear sampling of NCHW src [N, C, H, W] at grid [N, OH, OW, 2] into
// dst [N, C, OH, OW], as torch.nn.functional.grid_sample(mode="bilinear")
// with padding_mode "zeros" or "border".
//
// Template parameters (backend/wgpu/sample.go renders them):
//   .Enable        "enable f16;" when .T is f16, else empty
//   .T             WGSL type of the values and the grid: f32 or f16
//   .WorkgroupSize invocations per workgroup
//
// One invocation per element of dst, no loops. Coordinates and weights are
// computed in f32 with PyTorch's formulas, term by term, so that results
// match it to rounding.
{{.Enable}}

struct Params {
    n: u32,             // elements of dst
    row_stride: u32,    // invocations per row of the 2-D dispatch grid
    channels: u32,
    height: u32,
    width: u32,
    out_h: u32,
    out_w: u32,
    border: u32,        // 1: clamp coordinates to the border; 0: zeros outside
    align_corners: u32,
    dst_offset: u32,
    src_offset: u32,
    grid_offset: u32,
    src_strides: vec4<u32>,   // n, c, h, w
    grid_strides: vec4<u32>,  // n, oh, ow, xy
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{.T}}>;
@group(0) @binding(1) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(2) var<storage, read> grid: array<{{.T}}>;
@group(0) @binding(3) var<uniform> params: Params;

// source_coordinate maps a normalized coordinate in [−1, 1] to a pixel
// coordinate along an axis of the given size.
fn source_coordinate(g: f32, size: u32) -> f32 {
    let n = f32(size);
    var p: f32;
    if (params.align_corners != 0u) {
        p = ((g + 1.0) / 2.0) * (n - 1.0);
    } else {
        p = ((g + 1.0) * n - 1.0) / 2.0;
    }
    // NaN (tested on the bits: WGSL lets compilers assume there is none)
    // and infinities become a coordinate far outside, which samples 0;
    // finite coordinates far outside are pulled in to [−2, size+1], which
    // changes no result but keeps floor() within i32.
    if ((bitcast<u32>(p) & 0x7f800000u) == 0x7f800000u) {
        p = -2.0;
    }
    if (params.border != 0u) {
        return clamp(p, 0.0, n - 1.0);
    }
    return clamp(p, -2.0, n + 1.0);
}

fn tap(base: u32, y: i32, x: i32) -> f32 {
    if (y < 0 || y >= i32(params.height) || x < 0 || x >= i32(params.width)) {
        return 0.0;
    }
    return f32(src[base + u32(y) * params.src_strides.z + u32(x) * params.src_strides.w]);
}

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

    let g = params.grid_strides;
    let at = params.grid_offset + n * g.x + oh * g.y + ow * g.z;
    let ix = source_coordinate(f32(grid[at]), params.width);
    let iy = source_coordinate(f32(grid[at + g.w]), params.height);

    let x0 = floor(ix);
    let y0 = floor(iy);
    let x1 = x0 + 1.0;
    let y1 = y0 + 1.0;
    // PyTorch's weights of the north-west, north-east, south-west and
    // south-east neighbours, summed in that order.
    let nw = (x1 - ix) * (y1 - iy);
    let ne = (ix - x0) * (y1 - iy);
    let sw = (x1 - ix) * (iy - y0);
    let se = (ix - x0) * (iy - y0);

    let base = params.src_offset + n * params.src_strides.x + c * params.src_strides.y;
    let xa = i32(x0);
    let ya = i32(y0);
    var v = 0.0;
    v += tap(base, ya, xa) * nw;
    v += tap(base, ya, xa + 1) * ne;
    v += tap(base, ya + 1, xa) * sw;
    v += tap(base, ya + 1, xa + 1) * se;
    dst[params.dst_offset + i] = narrow(v);
}
