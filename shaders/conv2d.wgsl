{{/*
Conv2D as an implicit GEMM, as torch.nn.functional.conv2d without bias:
per group g, dst[n, g·M + r, oh, ow] = Σ_k weight[g·M + r, k] · col[k, j],
a GEMM of M = Cout/groups rows, N·OH·OW columns j = (n, oh, ow) and
K = Cin/groups·KH·KW, with k = (ci, kh, kw) and
col[k, j] = src[n, g·Cin/groups + ci, oh·SH − PH + kh·DH, ow·SW − PW + kw·DW]
(0 in the padding). The columns are never stored: the loader of the column
tile computes each address on the fly.

Template parameters (backend/wgpu/conv2d.go renders them):
  .Tile   T: a workgroup of T×T invocations computes a 4T×4T block of one
          group's GEMM, each invocation a 4×4 sub-block in four vec4
          accumulators (register blocking), as matmul.wgsl
  .Src    WGSL type of src and weight, .Dst (the same) of dst (f32 or f16;
          math is f32)
  .Enable "enable f16;" when .Src is f16
  .Epi    the fusion epilogue's WGSL (backend/wgpu/fusion.go), or empty: it
          declares the outputs at bindings 0.. in place of dst; src and
          weight follow at .SrcBind and .SrcBind+1, params at .PBind, and
          every output element goes to epilogue(i, alpha·acc) with i its
          row-major index in [N, Cout, OH, OW] (no dst offset). beta is 0.

The grid is (column blocks, row blocks × groups). Each invocation stages
the same four columns at every k step, so their image, first input row and
column and base address are worked out once; a k step costs one (ci, kh,
kw) decomposition per operand. K is walked in steps of T, (k_end −
k_begin)·(T+1)/T loop iterations per invocation: llvmpipe stops a shader's
loops after 65,535, so the host splits long K into passes that accumulate
through beta.

Split-K: the grid's z is a slice of K, [k_begin + z·k_split, +k_split)
within [k_begin, k_end), whose outputs go to dst[z·total + i]; the host
renders .Dst f32 without epilogue, alpha 1 and beta 0 for that, binds an f32
scratch as dst, and sums the slices with matmul_splitk.wgsl. A weight
gradient (a convolution whose kernel is the whole image, graph's
correlateOverBatch) has few outputs and a K of N·OH·OW: without slices its
handful of workgroups would leave most of a GPU idle. With z = 1 and
k_split ≥ k_end − k_begin this is the plain kernel.
*/}}
{{- .Enable}}

struct Params {
{{- template "epilogue_params"}}
    m: u32,            // output channels per group: the GEMM's rows
    ncols: u32,        // N·OH·OW: the GEMM's columns
    k_begin: u32,
    k_end: u32,
    cout: u32,
    l: u32,            // OH·OW
    tiles_y: u32,      // row blocks per group
    // the window; channels: input channels per group
{{- template "window_params"}}
    src_offset: u32,
    w_offset: u32,
    dst_offset: u32,
    alpha: f32,
    beta: f32,         // 0: dst is not read
    src_strides: vec4<u32>,  // n, c, h, w
    w_strides: vec4<u32>,    // cout, cin/groups, kh, kw
    k_split: u32,      // K per slice of the grid's z (split-K)
    total: u32,        // N·Cout·OH·OW: one slice's outputs
}

{{- template "gemm_dst" .}}
@group(0) @binding({{.SrcBind}}) var<storage, read> src: array<{{.Src}}>;
@group(0) @binding({{.WBind}}) var<storage, read> weight: array<{{.Src}}>;
@group(0) @binding({{.PBind}}) var<uniform> params: Params;

{{template "gemm4_tiles" .}}

// A column outside the GEMM gets this first input row, so that every tap
// of it falls in the padding.
const OUTSIDE: i32 = -0x40000000;

// tap splits k into the offsets it adds within a group: the channel's
// offset in src, and the kernel tap's rows and columns (dilated).
fn tap(k: u32) -> vec3<u32> {
    let taps = params.kh * params.kw;
    let ci = k / taps;
    let r = k - ci * taps;
    let ky = r / params.kw;
    let kx = r - ky * params.kw;
    return vec3<u32>(ci, ky, kx);
}

fn load_b(base: u32, y0: i32, x0: i32, koff: u32, dy: i32, dx: i32) -> f32 {
    let y = y0 + dy;
    let x = x0 + dx;
    if (y >= 0 && u32(y) < params.height && x >= 0 && u32(x) < params.width) {
        let s = params.src_strides;
        return f32(src[base + koff + u32(y) * s.z + u32(x) * s.w]);
    }
    return 0.0;
}
{{template "gemm_put" .}}

@compute @workgroup_size({{.Tile}}, {{.Tile}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let group = wg.y / params.tiles_y;
    let block_row = (wg.y % params.tiles_y) * 4u * T;
    let block_col = wg.x * 4u * T;
    let ss = params.src_strides;
    let ws = params.w_strides;
    let src_group = params.src_offset + group * params.channels * ss.y;
    let w_group = params.w_offset + group * params.m * ws.x;

    // Invocation f stages one k × 4-row slice of the weight, neighbours
    // along k (the weight's fast axis), and one k × 4-column slice of the
    // columns, neighbours along the columns (the image's fast axis).
    let f = lid.y * T + lid.x;
    let a_k = f % T;
    let a_i = f / T;
    let b_k = f / T;
    let b_j = f % T;

    // The four columns this invocation stages: base address, first input
    // row and column.
    let bc = block_col + b_j * 4u;
    var b_base = vec4<u32>(0u);
    var b_y = vec4<i32>(OUTSIDE);
    var b_x = vec4<i32>(0);
    for (var c = 0u; c < 4u; c++) {
        let j = bc + c;
        if (j < params.ncols) {
            let n = j / params.l;
            let p = j - n * params.l;
            let oh = p / params.out_w;
            let ow = p - oh * params.out_w;
            b_base[c] = src_group + n * ss.x;
            b_y[c] = i32(oh * params.stride_h) - i32(params.pad_h);
            b_x[c] = i32(ow * params.stride_w) - i32(params.pad_w);
        }
    }

    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);

    let ar = block_row + a_i * 4u;
    let k_lo = params.k_begin + wg.z * params.k_split;
    let k_hi = min(k_lo + params.k_split, params.k_end);
    for (var k0 = k_lo; k0 < k_hi; k0 += T) {
        var wv = vec4<f32>(0.0);
        let ak = k0 + a_k;
        if (ak < k_hi) {
            let t = tap(ak);
            let at = w_group + t.x * ws.y + t.y * ws.z + t.z * ws.w;
            if (ar < params.m) { wv.x = f32(weight[at + ar * ws.x]); }
            if (ar + 1u < params.m) { wv.y = f32(weight[at + (ar + 1u) * ws.x]); }
            if (ar + 2u < params.m) { wv.z = f32(weight[at + (ar + 2u) * ws.x]); }
            if (ar + 3u < params.m) { wv.w = f32(weight[at + (ar + 3u) * ws.x]); }
        }
        a_tile[a_k * T + a_i] = wv;

        var cv = vec4<f32>(0.0);
        let bk = k0 + b_k;
        if (bk < k_hi) {
            let t = tap(bk);
            let koff = t.x * ss.y;
            let dy = i32(t.y * params.dil_h);
            let dx = i32(t.z * params.dil_w);
            cv = vec4<f32>(load_b(b_base.x, b_y.x, b_x.x, koff, dy, dx), load_b(b_base.y, b_y.y, b_x.y, koff, dy, dx),
                           load_b(b_base.z, b_y.z, b_x.z, koff, dy, dx), load_b(b_base.w, b_y.w, b_x.w, koff, dy, dx));
        }
        b_tile[b_k * T + b_j] = cv;
{{- template "gemm4_product"}}
    }

    // Store: column j of row r goes to (n·Cout + group·M + r)·L + p, in
    // slice z's slab.
    let row = block_row + lid.y * 4u;
    let col = block_col + lid.x * 4u;
    var acc = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
    for (var c = 0u; c < 4u; c++) {
        let j = col + c;
        if (j >= params.ncols) {
            break;
        }
        let n = j / params.l;
        let p = j - n * params.l;
        let first = wg.z * params.total + (n * params.cout + group * params.m + row) * params.l + p;
        for (var r = 0u; r < 4u; r++) {
            if (row + r < params.m) {
                put(first + r * params.l, acc[r][c]);
            }
        }
    }
}
