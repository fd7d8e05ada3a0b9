// Im2col, as torch.nn.functional.unfold: NCHW images src [N, C, H, W] become
// columns dst [N, C·KH·KW, OH·OW], row c·KH·KW + kh·KW + kw and column
// oh·OW + ow holding src[n, c, oh·SH − PH + kh·DH, ow·SW − PW + kw·DW], or 0
// where that falls in the padding.
//
// Template parameters (backend/wgpu/conv.go renders them):
//   .Enable        "enable f16;" when .T is f16, else empty
//   .T             WGSL type of the values: f32 or f16
//   .WorkgroupSize invocations per workgroup
//
// One invocation per run of up to four consecutive columns of a dst row,
// in dst's order, so that the writes (which outnumber the reads KH·KW
// times) stay coalesced. The only loop is the 4-step run.
{{.Enable}}

struct Params {
    n: u32,             // runs: dst's lines times ⌈OW/4⌉
    row_stride: u32,    // invocations per row of the 2-D dispatch grid
{{- template "window_params"}}
    dst_offset: u32,
    src_offset: u32,
    src_strides: vec4<u32>,  // n, c, h, w
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{.T}}>;
@group(0) @binding(1) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // Invocation q writes the run of up to four columns starting at
    // ow = 4·(q mod ⌈OW/4⌉) of one row: the five divisions that locate it
    // are paid once per run rather than per element, which on a software
    // adapter is a third of the time.
    let q = id.y * params.row_stride + id.x;
    if (q >= params.n) {
        return;
    }
    let runs = (params.out_w + 3u) / 4u;
    let line = q / runs;  // the (n, row, oh) line of OW columns
    let ow0 = (q - line * runs) * 4u;
    var t = line;
    let oh = t % params.out_h;
    t /= params.out_h;
    let kx = t % params.kw;
    t /= params.kw;
    let ky = t % params.kh;
    t /= params.kh;
    let c = t % params.channels;
    let n = t / params.channels;

    // Signed, since the window may start in the padding.
    let y = i32(oh * params.stride_h + ky * params.dil_h) - i32(params.pad_h);
    let s = params.src_strides;
    let row = params.src_offset + n * s.x + c * s.y + u32(max(y, 0)) * s.z;
    let y_in = y >= 0 && u32(y) < params.height;
    let out = params.dst_offset + line * params.out_w;
    for (var k = 0u; k < 4u; k++) {
        let ow = ow0 + k;
        if (ow >= params.out_w) {
            break;
        }
        let x = i32(ow * params.stride_w + kx * params.dil_w) - i32(params.pad_w);
        var v = {{.T}}(0);
        if (y_in && x >= 0 && u32(x) < params.width) {
            v = src[row + u32(x) * s.w];
        }
        dst[out + ow] = v;
    }
}
