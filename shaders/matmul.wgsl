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
    m: u32,
    n: u32,
    k_begin: u32,
    k_end: u32,
    a_offset: u32,
    b_offset: u32,
    dst_offset: u32,
    batch: u32,        // batches in all
    a_sm: u32,         // a's row and k strides
    a_sk: u32,
    b_sk: u32,         // b's k and column strides
    b_sn: u32,
    tiles_y: u32,      // row blocks per batch
    grid_z: u32,
    batch_rank: u32,
    flags: u32,        // 1: stage a along k; 2: stage b along k (see main)
    alpha: f32,
    beta: f32,         // 0: dst is not read
    batch_shape: array<vec4<u32>, 2>,
    a_batch: array<vec4<u32>, 2>,
    b_batch: array<vec4<u32>, 2>,
}

{{- if .Epi}}
{{.Epi}}
{{- else}}
@group(0) @binding(0) var<storage, read_write> dst: array<{{.Dst}}>;
{{- end}}
@group(0) @binding({{.ABind}}) var<storage, read> a: array<{{.Src}}>;
@group(0) @binding({{add .ABind 1}}) var<storage, read> b: array<{{.Src}}>;
@group(0) @binding({{.PBind}}) var<uniform> params: Params;

const T: u32 = {{.Tile}}u;

// a_tile[kk*T + r] holds rows 4r … 4r+3 of the block at k = k0 + kk;
// b_tile[kk*T + c] holds columns 4c … 4c+3 of the block at k = k0 + kk.
var<workgroup> a_tile: array<vec4<f32>, {{.TileSquared}}>;
var<workgroup> b_tile: array<vec4<f32>, {{.TileSquared}}>;

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
{{- if and (eq .Dst "f16") (not .Epi)}}
{{template "to_f16"}}
{{- end}}

// put takes output i, a row-major index over [batch…, M, N].
fn put(i: u32, x: f32) {
{{- if .Epi}}
    epilogue(i, params.alpha * x);
{{- else}}
    let o = params.dst_offset + i;
    var v = params.alpha * x;
    if (params.beta != 0.0) {
        v += params.beta * f32(dst[o]);
    }
    dst[o] = {{if eq .Dst "f16"}}to_f16(v){{else}}v{{end}};
{{- end}}
}

fn store(base: u32, row: u32, col: u32, v: vec4<f32>) {
    if (row >= params.m) {
        return;
    }
    let i = base + row * params.n + col;
    if (col < params.n) { put(i, v.x); }
    if (col + 1u < params.n) { put(i + 1u, v.y); }
    if (col + 2u < params.n) { put(i + 2u, v.z); }
    if (col + 3u < params.n) { put(i + 3u, v.w); }
}

@compute @workgroup_size({{.Tile}}, {{.Tile}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let batch = wg.z + params.grid_z * (wg.y / params.tiles_y);
    if (batch >= params.batch) {
        return; // the whole workgroup: batch is uniform
    }
    let coords = unravel(batch, params.batch_shape, params.batch_rank);
    let a_base = strided_at(coords, params.a_batch, params.a_offset);
    let b_base = strided_at(coords, params.b_batch, params.b_offset);
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
        workgroupBarrier();

        for (var kk = 0u; kk < T; kk++) {
            let av = a_tile[kk * T + lid.y];
            let bv = b_tile[kk * T + lid.x];
            acc0 += av.x * bv;
            acc1 += av.y * bv;
            acc2 += av.z * bv;
            acc3 += av.w * bv;
        }
        workgroupBarrier();
    }

    store(d_base, row, col, acc0);
    store(d_base, row + 1u, col, acc1);
    store(d_base, row + 2u, col, acc2);
    store(d_base, row + 3u, col, acc3);
}
