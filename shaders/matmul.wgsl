{{/*
Batched strided matrix product dst = alpha·a·b + beta·dst, for the k in
[params.k_begin, params.k_end) of one pass.

Template parameters (backend/wgpu/matmul.go renders them):
  .Tile   T: a workgroup of T×T invocations computes a 4T×4T block of one
          batch's dst, each invocation a 4×4 sub-block in four vec4
          accumulators (register blocking)
  .Src    WGSL type of a and b; .Dst of dst (f32 or f16; math is f32)
  .Enable "enable f16;" when an f16 array is bound
  .Epi    the fusion epilogue's WGSL (backend/wgpu/fusion.go), or empty: it
          declares the outputs at bindings 0.. in place of dst, a and b
          follow at .ABind and .ABind+1, params at .ABind+2+inputs (.PBind),
          and every output element goes to epilogue(i, alpha·acc) with i its
          row-major index in [batch…, M, N] (no dst offset). beta is 0 then.

Operands are strided views: a[row, k] lives at a_base + row·a_sm + k·a_sk,
so transposes cost nothing; the batch index is unravelled once per
workgroup over the batch shape, whose strides may be 0 (broadcast). dst is
contiguous. The grid is (column blocks, row blocks × batch groups, batch
groups): batches beyond the z limit fold into y.

K is walked in steps of T through workgroup memory where each invocation
stages one vec4 of a and one of b, so the only loops are the K walk and
the T-step inner product: (k_end − k_begin)·(T+1)/T iterations per
invocation. llvmpipe silently stops a shader's loops after 65,535 of them,
so the host splits long K into passes that accumulate through beta.
Every load and store is bounds-checked: M, N and K need not be multiples
of the tile.
*/}}
{{- .Enable}}

struct Params {
{{- template "epilogue_params"}}
{{- template "matmul_params"}}
    flags: u32,        // 1: stage a along k; 2: stage b along k (see main)
    alpha: f32,
    beta: f32,         // 0: dst is not read
    batch_shape: array<vec4<u32>, 2>,
    a_batch: array<vec4<u32>, 2>,
    b_batch: array<vec4<u32>, 2>,
}

{{- template "gemm_dst" .}}
@group(0) @binding({{.ABind}}) var<storage, read> a: array<{{.Src}}>;
@group(0) @binding({{add .ABind 1}}) var<storage, read> b: array<{{.Src}}>;
@group(0) @binding({{.PBind}}) var<uniform> params: Params;

{{template "gemm4_tiles" .}}

{{template "strided" .}}

fn load_a(base: u32, row: u32, k: u32) -> f32 {
    if (row < params.m && k < params.k_end) {
        return f32(a[base + row * params.a_sm + k * params.a_sk]);
    }
    return 0.0;
}

fn load_b(base: u32, k: u32, col: u32) -> f32 {
    if (k < params.k_end && col < params.n) {
        return f32(b[base + k * params.b_sk + col * params.b_sn]);
    }
    return 0.0;
}
{{template "gemm_put" .}}
{{template "gemm_store"}}

@compute @workgroup_size({{.Tile}}, {{.Tile}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let batch = wg.z + params.grid_z * (wg.y / params.tiles_y);
{{- template "matmul_batch"}}
    let d_base = batch * params.m * params.n;
    let block_row = (wg.y % params.tiles_y) * 4u * T;
    let block_col = wg.x * 4u * T;
    let row = block_row + lid.y * 4u;
    let col = block_col + lid.x * 4u;

    // Invocation f stages one k × 4-row slice of a and one k × 4-column
    // slice of b. Which of the two coordinates follows f % T (neighbouring
    // invocations) is chosen per operand so that neighbours read
    // neighbouring addresses: along k when that operand's k stride is 1.
    let f = lid.y * T + lid.x;
    var a_k = f / T;
    var a_i = f % T;
    if ((params.flags & 1u) != 0u) {
        a_k = f % T;
        a_i = f / T;
    }
    var b_k = f / T;
    var b_j = f % T;
    if ((params.flags & 2u) != 0u) {
        b_k = f % T;
        b_j = f / T;
    }

    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);

    for (var k0 = params.k_begin; k0 < params.k_end; k0 += T) {
        let ar = block_row + a_i * 4u;
        let ak = k0 + a_k;
        a_tile[a_k * T + a_i] = vec4<f32>(load_a(a_base, ar, ak), load_a(a_base, ar + 1u, ak),
                                          load_a(a_base, ar + 2u, ak), load_a(a_base, ar + 3u, ak));
        let bc = block_col + b_j * 4u;
        let bk = k0 + b_k;
        b_tile[b_k * T + b_j] = vec4<f32>(load_b(b_base, bk, bc), load_b(b_base, bk, bc + 1u),
                                          load_b(b_base, bk, bc + 2u), load_b(b_base, bk, bc + 3u));
{{- template "gemm4_product"}}
    }

    store(d_base, row, col, acc0);
    store(d_base, row + 1u, col, acc1);
    store(d_base, row + 2u, col, acc2);
    store(d_base, row + 3u, col, acc3);
}
