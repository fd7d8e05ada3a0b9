{{/*
Shared WGSL pieces of the GEMM kernels: matmul.wgsl, matmul_tiled.wgsl,
matmul_splitk.wgsl and conv2d.wgsl. This file only defines templates (all
*.wgsl files are parsed together, see strided.wgsl). Each takes the
kernel's data (.), whose fields they read:
  .Epi    the fusion epilogue's WGSL (backend/wgpu/fusion.go), or empty
  .Dst    WGSL type of dst (f32 or f16; math is f32)
  .Tile .TileSquared  T, the side of the T×T workgroup, and T·T
          ("gemm4_tiles" only)

"gemm_dst" (at module scope, first binding) declares the outputs: the
epilogue's declarations at bindings 0.., or else
    dst: array<.Dst> at binding 0

"gemm_put" (at module scope, after params) defines
    put(i: u32, x: f32)
which stores output i, a row-major index over the GEMM's outputs:
epilogue(i, alpha·x) with an epilogue (beta is 0 then), else
dst[dst_offset + i] = alpha·x + beta·dst[dst_offset + i], dst read only
when beta ≠ 0. It reads params.alpha, params.beta and params.dst_offset,
and brings to_f16 (reduce.wgsl) along where an f16 dst needs it.

"gemm_store" (after gemm_put) defines
    store(base: u32, row: u32, col: u32, v: vec4<f32>)
which puts v's four columns col … col+3 of row at base + row·N + col,
skipping those outside params.m × params.n.

"epilogue_params" (first in the Params struct of every producer:
matmul.wgsl, matmul_tiled.wgsl, matmul_splitk.wgsl, conv2d.wgsl) declares
the epilogue's uniform words, params.epi[k / 4][k % 4]: the offsets,
shapes, strides and constants of the fused ops after the producer. They
are words and not literals so that one compiled kernel serves every
shape and every constant; the host writes them (zeros without an
epilogue) before the producer's own words (params.epilogue in
backend/wgpu/kernels.go). An epilogue that needs more words than these
renders the rest as literals, constants last (spillWords in
fusion_render.go).

"matmul_params" (after "epilogue_params" in the Params struct of matmul.wgsl and
matmul_tiled.wgsl) declares the words both encode first
(backend/wgpu/matmul.go, matmul_tiled.go): the sizes, the k range of the
pass, the offsets, the batch count, a's and b's strides, the grid's row
blocks per batch and z size, and the batch rank.

"matmul_batch" (inside main, after `let batch` and the "strided"
template) returns when batch is past params.batch, the whole workgroup
(batch is uniform), and declares coords (its index) and a_base and b_base, its element
offsets in a and b.

"gemm4_tiles" (at module scope) and "gemm4_product" (inside the k walk,
after the tiles are staged) are the register-blocked 4×4-per-invocation
scheme: a T×T workgroup, workgroup tiles a_tile and b_tile of T·T vec4s
(a_tile[kk*T + r]: rows 4r … 4r+3 at k = k0 + kk; b_tile[kk*T + c]: columns
4c … 4c+3), and the T-step inner product into the accumulators acc0 …
acc3 (vec4<f32>, one a row each) that the kernel declares.
*/}}
{{- define "epilogue_params"}}
    epi: array<vec4<u32>, 5>,
{{- end}}

{{- define "matmul_params"}}
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
{{- end}}

{{- define "matmul_batch"}}
    if (batch >= params.batch) {
        return; // the whole workgroup: batch is uniform
    }
    let coords = unravel(batch, params.batch_shape, params.batch_rank);
    let a_base = strided_at(coords, params.a_batch, params.a_offset);
    let b_base = strided_at(coords, params.b_batch, params.b_offset);
{{- end}}

{{- define "gemm_dst"}}
{{- if .Epi}}
{{.Epi}}
{{- else}}
@group(0) @binding(0) var<storage, read_write> dst: array<{{.Dst}}>;
{{- end}}
{{- end}}

{{- define "gemm_put"}}
{{- if and (eq .Dst "f16") (not .Epi)}}
{{template "to_f16"}}
{{- end}}

// put takes output i, a row-major index over the GEMM's outputs.
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
{{- end}}

{{- define "gemm_store"}}
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
{{- end}}

{{- define "gemm4_tiles"}}
const T: u32 = {{.Tile}}u;

// a_tile[kk*T + r] holds rows 4r … 4r+3 of the block at k = k0 + kk;
// b_tile[kk*T + c] holds columns 4c … 4c+3 of the block at k = k0 + kk.
var<workgroup> a_tile: array<vec4<f32>, {{.TileSquared}}>;
var<workgroup> b_tile: array<vec4<f32>, {{.TileSquared}}>;
{{- end}}

{{- define "gemm4_product"}}
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
{{- end}}
