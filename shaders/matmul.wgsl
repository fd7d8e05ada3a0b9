// Row-major matrix product dst[M×N] = a[M×K] · b[K×N].
//
// Template parameter .Tile (T): a workgroup has T×T invocations and computes
// a 4T×4T block of dst; each invocation computes a 4×4 sub-block held in
// four vec4 accumulators. K is walked in steps of T through workgroup memory
// where each invocation stages exactly one vec4 of a and one of b, so the
// only loops are the K walk and the T-step inner product: about 1.06·K
// iterations per invocation in total, which keeps software rasterizers
// (llvmpipe stops a shader's loops after 65,535 iterations) correct up to
// K ≈ 61,000. Every load and store is bounds-checked, so M, N and K need
// not be multiples of the tile.

struct Params {
    m: u32,
    k: u32,
    n: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const T: u32 = {{.Tile}}u;

// a_tile[kk*T + r] holds a[row r*4 .. r*4+3 of the block][k0 + kk];
// b_tile[kk*T + c] holds b[k0 + kk][column c*4 .. c*4+3 of the block].
var<workgroup> a_tile: array<vec4<f32>, {{.TileSquared}}>;
var<workgroup> b_tile: array<vec4<f32>, {{.TileSquared}}>;

fn load_a(row: u32, col: u32) -> f32 {
    if (row < params.m && col < params.k) {
        return a[row * params.k + col];
    }
    return 0.0;
}

fn load_b(row: u32, col: u32) -> f32 {
    if (row < params.k && col < params.n) {
        return b[row * params.n + col];
    }
    return 0.0;
}

fn store(row: u32, col: u32, v: vec4<f32>) {
    if (row >= params.m) {
        return;
    }
    let base = row * params.n;
    if (col < params.n) { dst[base + col] = v.x; }
    if (col + 1u < params.n) { dst[base + col + 1u] = v.y; }
    if (col + 2u < params.n) { dst[base + col + 2u] = v.z; }
    if (col + 3u < params.n) { dst[base + col + 3u] = v.w; }
}

@compute @workgroup_size({{.Tile}}, {{.Tile}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let block_row = wg.y * 4u * T;
    let block_col = wg.x * 4u * T;
    let row = block_row + lid.y * 4u;
    let col = block_col + lid.x * 4u;

    // The invocation with flat index f stages a_tile[f] and b_tile[f].
    let f = lid.y * T + lid.x;
    let stage_k = f / T;
    let stage_i = f % T;

    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);

    for (var k0 = 0u; k0 < params.k; k0 += T) {
        let ar = block_row + stage_i * 4u;
        let ak = k0 + stage_k;
        a_tile[f] = vec4<f32>(load_a(ar, ak), load_a(ar + 1u, ak), load_a(ar + 2u, ak), load_a(ar + 3u, ak));
        let bc = block_col + stage_i * 4u;
        b_tile[f] = vec4<f32>(load_b(ak, bc), load_b(ak, bc + 1u), load_b(ak, bc + 2u), load_b(ak, bc + 3u));
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

    store(row, col, acc0);
    store(row + 1u, col, acc1);
    store(row + 2u, col, acc2);
    store(row + 3u, col, acc3);
}
