{{/*
Sort along the last axis (hal.Device.Sort): a bitonic network over
(key, position) pairs, one padded row of P = 2^m pairs per row in a scratch
buffer of vec2<u32>.

Template parameters (backend/wgpu/sort.go renders them):
  .Mode   "load":   pair j of each row is (key of src[j], j), or (max, max)
                    past the row's end, so padding sorts last;
          "local":  one workgroup sorts a block of .Block pairs in
                    workgroup memory, for every merge stage k from
                    params.k_lo to params.k_hi whose steps j fit in the
                    block (j < Block);
          "global": one compare-exchange step (k, j) of the network over
                    every row, one pair per invocation, for j ≥ Block;
          "store":  values[j] = src at position j's pair, indices[j] = that
                    position.
  .Src    WGSL type of src (f32, f16, i32); .Enable "enable f16;" for f16
  .Block  pairs a workgroup sorts in "local" (twice its size, a power of
          two)

Why the shape of the kernel:
  - Keys are u32 whose unsigned order is torch.sort's: NaN (any payload,
    tested on the bits, as WGSL may assume no NaN) above +Inf, −0 equal to
    +0; complemented for descending, before the padding is written, so
    padding stays last. The position is the tie-breaker, so the order is
    total: the sort is stable whatever the network does, as hal's stable
    sort asks, and equal keys cannot swap. f16 keys come from the f16 bits
    (through a vec2<f16> bitcast), without a conversion.
  - The values are copied from src by position, not rebuilt from keys, so
    NaN payloads and the sign of zero come out as they went in.
  - llvmpipe silently stops a shader's loops after 65,535 iterations per
    invocation. Nothing here loops longer than log²(Block)/2 steps: long
    rows take one "global" dispatch per step of the network whose
    distance j is at least the block, and the short steps of every stage
    run in "local".
*/}}
{{- .Enable}}

struct Params {
    rows: u32,       // rows sorted
    n: u32,          // row length
    p: u32,          // padded row length, a power of two
    grid_x: u32,     // workgroups per row of the 2-D grid
    k_lo: u32,       // local: first merge stage; global: the stage k
    k_hi: u32,       // local: last merge stage; global: the step j
    blk: u32,        // local: pairs per block, min(Block, p)
    descending: u32, // 1 to sort in descending order
    src_offset: u32,
    inner_stride: u32, // src's stride along the last axis
    outer_rank: u32,   // src's other axes, collapsed
    zero: u32,         // always 0
    values_offset: u32,  // store: the element offsets of values and indices
    indices_offset: u32,
    outer_shape: array<vec4<u32>, 2>,
    outer_strides: array<vec4<u32>, 2>,
}

{{- if eq .Mode "load"}}
@group(0) @binding(0) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> src: array<{{.Src}}>;
@group(0) @binding(2) var<uniform> params: Params;
{{- else if eq .Mode "store"}}
@group(0) @binding(0) var<storage, read_write> values: array<{{.Src}}>;
@group(0) @binding(1) var<storage, read_write> indices: array<i32>;
@group(0) @binding(2) var<storage, read> src: array<{{.Src}}>;
@group(0) @binding(3) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(4) var<uniform> params: Params;
{{- else}}
@group(0) @binding(0) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(1) var<uniform> params: Params;
{{- end}}

const BLOCK: u32 = {{.Block}}u;
const WG: u32 = {{.Block}}u / 2u;

{{template "strided" .}}

// before reports whether pair a sorts before pair b: by key, then by
// position.
fn before(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x < b.x || (a.x == b.x && a.y < b.y);
}

fn row_base(row: u32) -> u32 {
    return strided_at(unravel(row, params.outer_shape, params.outer_rank), params.outer_strides, params.src_offset);
}

{{- if eq .Mode "load"}}

// sort_key maps x to a u32 in torch.sort's ascending order; see the header.
fn sort_key(x: {{.Src}}) -> u32 {
{{- if eq .Src "i32"}}
    return bitcast<u32>(x) ^ 0x80000000u;
{{- else if eq .Src "f16"}}
    var b = bitcast<u32>(vec2<f16>(x, f16(0.0))) & 0xffffu;
    if ((b & 0x7fffu) > 0x7c00u) {
        return 0xffffffffu; // NaN
    }
    if ((b & 0x7fffu) == 0u) {
        b = 0u; // −0 sorts with +0
    }
    return select(b | 0x8000u, 0x7fffu - (b & 0x7fffu), (b & 0x8000u) != 0u);
{{- else}}
    var b = bitcast<u32>(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return 0xffffffffu; // NaN
    }
    if ((b & 0x7fffffffu) == 0u) {
        b = 0u; // −0 sorts with +0
    }
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
{{- end}}
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * params.grid_x + wid.x) * WG + lid;
    if (i >= params.rows * params.p) {
        return;
    }
    let row = i / params.p;
    let j = i % params.p;
    if (j >= params.n) {
        pairs[i] = vec2<u32>(0xffffffffu, 0xffffffffu);
        return;
    }
    var key = sort_key(src[row_base(row) + j * params.inner_stride]);
    if (params.descending != 0u) {
        key = ~key;
    }
    pairs[i] = vec2<u32>(key, j);
}
{{- else if eq .Mode "store"}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * params.grid_x + wid.x) * WG + lid;
    if (i >= params.rows * params.n) {
        return;
    }
    let row = i / params.n;
    let j = i % params.n;
    let at = pairs[row * params.p + j].y;
    values[params.values_offset + i] = src[row_base(row) + at * params.inner_stride];
    indices[params.indices_offset + i] = i32(at);
}
{{- else if eq .Mode "global"}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = (wid.y * params.grid_x + wid.x) * WG + lid;
    let half = params.p / 2u;
    if (t >= params.rows * half) {
        return;
    }
    let k = params.k_lo;
    let j = params.k_hi;
    let row = t / half;
    let q = t % half;
    let i = 2u * j * (q / j) + q % j; // the lower element of the pair
    let a = row * params.p + i;
    let b = a + j;
    let x = pairs[a];
    let y = pairs[b];
    let up = (i & k) == 0u;
    if (before(y, x) == up) {
        pairs[a] = y;
        pairs[b] = x;
    }
}
{{- else}}

var<workgroup> tile: array<vec2<u32>, BLOCK>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let block = wid.y * params.grid_x + wid.x;
    let blocks = params.rows * (params.p / params.blk);
    if (block >= blocks) {
        return; // uniform: the whole workgroup leaves
    }
    let base = block * params.blk; // the block's first pair
    let start = base % params.p;   // its position in its row
    let live = lid < params.blk / 2u;
    if (live) {
        tile[lid] = pairs[base + lid];
        tile[lid + params.blk / 2u] = pairs[base + lid + params.blk / 2u];
    }
    workgroupBarrier();
    for (var k = params.k_lo; k <= params.k_hi; k *= 2u) {
        for (var j = min(k, params.blk) / 2u; j > 0u; j /= 2u) {
            if (live) {
                let i = 2u * j * (lid / j) + lid % j;
                let x = tile[i];
                let y = tile[i + j];
                let up = ((start + i) & k) == 0u;
                if (before(y, x) == up) {
                    tile[i] = y;
                    tile[i + j] = x;
                }
            }
            workgroupBarrier();
        }
    }
    if (live) {
        pairs[base + lid] = tile[lid];
        pairs[base + lid + params.blk / 2u] = tile[lid + params.blk / 2u];
    }
}
{{- end}}
