{{/*
Register-tiled batched strided matrix product dst = alpha·a·b + beta·dst,
one template for every tile configuration (backend/wgpu/matmul_tiled.go).

Template parameters:
  .WX .WY   workgroup size: WX invocations along N, WY along M
  .TM .TN   outputs per invocation: TM consecutive rows (a multiple of 4)
            times TN/4 groups of 4 columns, group q at column
            q·4·WX + 4·lid.x of the block, so that neighbouring invocations
            store neighbouring vec4s
  .BM .BN   the block of one workgroup: BM = WY·TM rows, BN = WX·TN columns
  .BK       the k step: a BK×BM slice of a and a BK×BN slice of b are staged
            in workgroup memory per step
  .AK .BKFast  a (b) is staged with neighbouring invocations along k (its
            fast axis when its k stride is 1) instead of along M (N)
  .VecA .VecB  a (b) is bound as vec4s and read 4 elements at a time along
            its fast axis (its stride there is 1, its offset, other stride
            and batch strides multiples of 4: the host checks)
  .Src .Dst .Enable  as in matmul.wgsl (f16 storage computes in f32)
  .Prefetch  read the next k step's share of a and b into registers while
            the current one multiplies (double buffering through registers:
            the global loads' latency hides behind the FMAs)
  .Double   two stages of a_tile and b_tile (a_tile[stage][…]): step i
            multiplies stage i % 2 while step i+1, fetched into registers
            before the multiply, is stashed into the other stage after it,
            so that one barrier per k step suffices (instead of two); the
            next step's global loads hide behind the FMAs as with .Prefetch,
            which .Double implies
  .Swizzle  the vec4 index v of tile row kk is stored at v ^ sw(kk), an
            XOR within aligned groups of 8 vec4s (BM and BN are multiples
            of 32). The stash that transposes an operand (.AK for a, .BKFast
            for b) writes scalars: one warp covers BK/4 groups of 4 k rows
            at a few neighbouring m (n), and without the XOR those rows,
            BM·4 bytes apart, share banks (4-way at BK = 16); with it they
            spread over all 32. The inner loop still reads whole vec4s (kk
            is a literal there, so sw(kk) is one XOR with a constant)
  .Warp     the invocation at flat index f = lid.y·WX + lid.x computes the
            outputs of (tx, ty) instead of (lid.x, lid.y): lane f % 32 of
            warp f / 32 at tx = 8·(warp % (WX/8)) + lane % 8,
            ty = 4·(warp / (WX/8)) + lane / 8, so that a warp of 32 covers
            8 invocations along N by 4 along M (WX % 8 = 0, WY % 4 = 0):
            per k step its reads of b_tile are 8 neighbouring vec4s (128
            bytes) and of a_tile 4 broadcast vec4s, rather than 16 vec4s
            and 2 (without it a warp is 16 by 2). Staging (f) is unchanged
  .SwizzleStep  32 / BK (1 from BK = 32 on): sw(kk) = (kk / 4 · step) mod 8
  .RS .WS   "[rs]" and "[ws]" with .Double (the read and write stage), else
            empty
  .KSw      sw(kk) for each kk of .Ks
  .Split    write raw partial sums to dst[split·total + i] (split-K; the
            reduction applies alpha, beta and the epilogue)
  .Epi .ABind .PBind  the fusion epilogue, as in matmul.wgsl
  .Ks .Rows4 .Cols4 .ALoads .BLoads  0…n−1 lists that unroll the inner loops;
  .FMAs     one entry per accumulator; .ATile .BTile  vec4s of the tiles

The only loop is the k walk: ceil(k_len/BK) iterations per invocation plus
unravel's ≤ 8, under llvmpipe's 65,535 loop-iteration limit because the
host keeps k_len ≤ 60,000·BK per workgroup (split-K or passes).
Every load and store is bounds-checked.
*/}}
{{- .Enable}}

struct Params {
{{- template "epilogue_params"}}
{{- template "matmul_params"}}
    splits: u32,       // k slices (1 without split-K)
    alpha: f32,
    beta: f32,         // 0: dst is not read
    k_split: u32,      // k per slice
    pad: u32,
    batch_shape: array<vec4<u32>, 2>,
    a_batch: array<vec4<u32>, 2>,
    b_batch: array<vec4<u32>, 2>,
}

{{- if .Split}}
@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
{{- else}}
{{- template "gemm_dst" .}}
{{- end}}
@group(0) @binding({{.ABind}}) var<storage, read> a: array<{{if .VecA}}vec4<{{.Src}}>{{else}}{{.Src}}{{end}}>;
@group(0) @binding({{add .ABind 1}}) var<storage, read> b: array<{{if .VecB}}vec4<{{.Src}}>{{else}}{{.Src}}{{end}}>;
@group(0) @binding({{.PBind}}) var<uniform> params: Params;

const WX: u32 = {{.WX}}u;
const WY: u32 = {{.WY}}u;
const BM: u32 = {{.BM}}u;
const BN: u32 = {{.BN}}u;
const BK: u32 = {{.BK}}u;
const NT: u32 = {{.WX}}u * {{.WY}}u;

// a_tile[kk·BM/4 + r/4][r%4] holds a[row block + r, k0 + kk];
// b_tile[kk·BN/4 + c/4][c%4] holds b[k0 + kk, column block + c].
{{- if .Double}}
var<workgroup> a_tile: array<array<vec4<f32>, {{.ATile}}>, 2>;
var<workgroup> b_tile: array<array<vec4<f32>, {{.BTile}}>, 2>;
{{- else}}
var<workgroup> a_tile: array<vec4<f32>, {{.ATile}}>;
var<workgroup> b_tile: array<vec4<f32>, {{.BTile}}>;
{{- end}}
{{- if .Swizzle}}

// sw(kk) is the XOR on the vec4 index within tile row kk (see .Swizzle):
// the BK/4 groups of 4 k steps that one stash instruction writes get
// distinct values, so the rows that share banks land in different ones.
fn sw(kk: u32) -> u32 {
    return ((kk / 4u) * {{.SwizzleStep}}u) & 7u;
}
{{- end}}

{{template "strided" .}}

{{- if .VecA}}

// load_a4 reads 4 elements of a from its fast axis starting at (row, k),
// zero where out of bounds. Along k the 4 share a row; along M, a k.
fn load_a4(base: u32, row: u32, k: u32) -> vec4<f32> {
    let v = vec4<f32>(a[(base + row * params.a_sm + k * params.a_sk) / 4u]);
{{- if .AK}}
    let ok = vec4<bool>(row < params.m) & (vec4<u32>(k) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(params.k_end));
{{- else}}
    let ok = (vec4<u32>(row) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(params.m)) & vec4<bool>(k < params.k_end);
{{- end}}
    return select(vec4<f32>(0.0), v, ok);
}
{{- else}}

fn load_a(base: u32, row: u32, k: u32) -> f32 {
    if (row < params.m && k < params.k_end) {
        return f32(a[base + row * params.a_sm + k * params.a_sk]);
    }
    return 0.0;
}
{{- end}}
{{- if .VecB}}

fn load_b4(base: u32, k: u32, col: u32) -> vec4<f32> {
    let v = vec4<f32>(b[(base + k * params.b_sk + col * params.b_sn) / 4u]);
{{- if .BKFast}}
    let ok = vec4<bool>(col < params.n) & (vec4<u32>(k) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(params.k_end));
{{- else}}
    let ok = (vec4<u32>(col) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(params.n)) & vec4<bool>(k < params.k_end);
{{- end}}
    return select(vec4<f32>(0.0), v, ok);
}
{{- else}}

fn load_b(base: u32, k: u32, col: u32) -> f32 {
    if (k < params.k_end && col < params.n) {
        return f32(b[base + k * params.b_sk + col * params.b_sn]);
    }
    return 0.0;
}
{{- end}}
{{- if .Split}}

// put takes output i, a row-major index over [batch…, M, N].
fn put(i: u32, x: f32) {
    dst[i] = x;
}
{{- else}}
{{template "gemm_put" .}}
{{- end}}
{{template "gemm_store"}}

@compute @workgroup_size({{.WX}}, {{.WY}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    // wg.y = (batch group · splits + split) · tiles_y + row block.
    let outer = wg.y / params.tiles_y;
    let split = outer % params.splits;
    let batch = wg.z + params.grid_z * (outer / params.splits);
{{- template "matmul_batch"}}
    var d_base = batch * params.m * params.n;
{{- if .Split}}
    d_base += split * params.batch * params.m * params.n;
{{- end}}
    let block_row = (wg.y % params.tiles_y) * BM;
    let block_col = wg.x * BN;
    let f = lid.y * WX + lid.x;
{{- if .Warp}}
    let warp = f / 32u;
    let lane = f % 32u;
    let tx = (warp % (WX / 8u)) * 8u + lane % 8u;
    let ty = (warp / (WX / 8u)) * 4u + lane / 8u;
{{- else}}
    let tx = lid.x;
    let ty = lid.y;
{{- end}}
    let k_lo = params.k_begin + split * params.k_split;
    let k_hi = min(k_lo + params.k_split, params.k_end);

    var acc: array<vec4<f32>, {{len .FMAs}}>;

{{- range $l := .ALoads}}
    var pa{{$l}}: {{if $.VecA}}vec4<f32>{{else}}f32{{end}};
{{- end}}
{{- range $l := .BLoads}}
    var pb{{$l}}: {{if $.VecB}}vec4<f32>{{else}}f32{{end}};
{{- end}}
    var k_next = k_lo;
{{- if .Prefetch}}
{{- template "tiled_fetch" .}}
{{- end}}

{{- if .Double}}
    // Stage 0 holds the first step; each step stashes the next into the
    // other stage after its multiply, then one barrier: a straggler still
    // multiplying stage s delays only the stash into s, one step later.
    var rs = 0u;
    var ws = 0u;
{{- template "tiled_fetch" .}}
{{- template "tiled_stash" .}}
    workgroupBarrier();
    for (var k0 = k_lo; k0 < k_hi; k0 += BK) {
        k_next = k0 + BK;
        let more = k_next < k_hi; // uniform: the barrier below stays outside
        if (more) {
{{- template "tiled_fetch" .}}
        }
{{- template "tiled_product" .}}
        ws = rs ^ 1u;
        if (more) {
{{- template "tiled_stash" .}}
        }
        workgroupBarrier();
        rs = ws;
    }
{{- else}}
    for (var k0 = k_lo; k0 < k_hi; k0 += BK) {
{{- if not .Prefetch}}
        k_next = k0;
{{- template "tiled_fetch" .}}
{{- end}}
{{- template "tiled_stash" .}}
        workgroupBarrier();
{{- if .Prefetch}}
        // The next step's loads are in flight while this step multiplies.
        k_next = k0 + BK;
        if (k_next < k_hi) {
{{- template "tiled_fetch" .}}
        }
{{- end}}
{{- template "tiled_product" .}}
        workgroupBarrier();
    }
{{- end}}

    let row = block_row + ty * {{.TM}}u;
{{- range .FMAs}}
    store(d_base, row + {{.Row}}u, block_col + {{.Q}}u * 4u * WX + tx * 4u, acc[{{.Acc}}]);
{{- end}}
}

{{/* tiled_fetch reads this invocation's share of the k step at k_next
from a and b into the registers pa… and pb…. */}}
{{define "tiled_fetch"}}
{{- range $l := .ALoads}}
        {
            let e = f + {{$l}}u * NT;
{{- if $.VecA}}
{{- if $.AK}}
            pa{{$l}} = load_a4(a_base, block_row + e / (BK / 4u), k_next + (e % (BK / 4u)) * 4u);
{{- else}}
            pa{{$l}} = load_a4(a_base, block_row + (e % (BM / 4u)) * 4u, k_next + e / (BM / 4u));
{{- end}}
{{- else}}
{{- if $.AK}}
            pa{{$l}} = load_a(a_base, block_row + e / BK, k_next + e % BK);
{{- else}}
            pa{{$l}} = load_a(a_base, block_row + e % BM, k_next + e / BM);
{{- end}}
{{- end}}
        }
{{- end}}
{{- range $l := .BLoads}}
        {
            let e = f + {{$l}}u * NT;
{{- if $.VecB}}
{{- if $.BKFast}}
            pb{{$l}} = load_b4(b_base, k_next + (e % (BK / 4u)) * 4u, block_col + e / (BK / 4u));
{{- else}}
            pb{{$l}} = load_b4(b_base, k_next + e / (BN / 4u), block_col + (e % (BN / 4u)) * 4u);
{{- end}}
{{- else}}
{{- if $.BKFast}}
            pb{{$l}} = load_b(b_base, k_next + e % BK, block_col + e / BK);
{{- else}}
            pb{{$l}} = load_b(b_base, k_next + e / BN, block_col + e % BN);
{{- end}}
{{- end}}
        }
{{- end}}
{{- end}}

{{/* tiled_stash stores the registers tiled_fetch filled into a_tile and
b_tile, laid out as the comment at a_tile says. */}}
{{define "tiled_stash"}}
{{- range $l := .ALoads}}
        {
            let e = f + {{$l}}u * NT;
{{- if $.VecA}}
{{- if $.AK}}
            let kk = (e % (BK / 4u)) * 4u;
            let r = e / (BK / 4u);
            a_tile{{$.WS}}[kk * (BM / 4u) + {{if $.Swizzle}}((r / 4u) ^ sw(kk)){{else}}r / 4u{{end}}][r % 4u] = pa{{$l}}.x;
            a_tile{{$.WS}}[(kk + 1u) * (BM / 4u) + {{if $.Swizzle}}((r / 4u) ^ sw(kk)){{else}}r / 4u{{end}}][r % 4u] = pa{{$l}}.y;
            a_tile{{$.WS}}[(kk + 2u) * (BM / 4u) + {{if $.Swizzle}}((r / 4u) ^ sw(kk)){{else}}r / 4u{{end}}][r % 4u] = pa{{$l}}.z;
            a_tile{{$.WS}}[(kk + 3u) * (BM / 4u) + {{if $.Swizzle}}((r / 4u) ^ sw(kk)){{else}}r / 4u{{end}}][r % 4u] = pa{{$l}}.w;
{{- else}}
            a_tile{{$.WS}}[e{{if $.Swizzle}} ^ sw(e / (BM / 4u)){{end}}] = pa{{$l}}; // at k step e / (BM / 4), rows 4·(e % (BM / 4))…
{{- end}}
{{- else}}
{{- if $.AK}}
            let kk = e % BK;
            let r = e / BK;
{{- else}}
            let r = e % BM;
            let kk = e / BM;
{{- end}}
            a_tile{{$.WS}}[kk * (BM / 4u) + {{if $.Swizzle}}((r / 4u) ^ sw(kk)){{else}}r / 4u{{end}}][r % 4u] = pa{{$l}};
{{- end}}
        }
{{- end}}
{{- range $l := .BLoads}}
        {
            let e = f + {{$l}}u * NT;
{{- if $.VecB}}
{{- if $.BKFast}}
            let kk = (e % (BK / 4u)) * 4u;
            let c = e / (BK / 4u);
            b_tile{{$.WS}}[kk * (BN / 4u) + {{if $.Swizzle}}((c / 4u) ^ sw(kk)){{else}}c / 4u{{end}}][c % 4u] = pb{{$l}}.x;
            b_tile{{$.WS}}[(kk + 1u) * (BN / 4u) + {{if $.Swizzle}}((c / 4u) ^ sw(kk)){{else}}c / 4u{{end}}][c % 4u] = pb{{$l}}.y;
            b_tile{{$.WS}}[(kk + 2u) * (BN / 4u) + {{if $.Swizzle}}((c / 4u) ^ sw(kk)){{else}}c / 4u{{end}}][c % 4u] = pb{{$l}}.z;
            b_tile{{$.WS}}[(kk + 3u) * (BN / 4u) + {{if $.Swizzle}}((c / 4u) ^ sw(kk)){{else}}c / 4u{{end}}][c % 4u] = pb{{$l}}.w;
{{- else}}
            b_tile{{$.WS}}[e{{if $.Swizzle}} ^ sw(e / (BN / 4u)){{end}}] = pb{{$l}}; // at k step e / (BN / 4), columns 4·(e % (BN / 4))…
{{- end}}
{{- else}}
{{- if $.BKFast}}
            let kk = e % BK;
            let c = e / BK;
{{- else}}
            let c = e % BN;
            let kk = e / BN;
{{- end}}
            b_tile{{$.WS}}[kk * (BN / 4u) + {{if $.Swizzle}}((c / 4u) ^ sw(kk)){{else}}c / 4u{{end}}][c % 4u] = pb{{$l}};
{{- end}}
        }
{{- end}}
{{- end}}

{{/* tiled_product multiplies the staged k step (stage .RS) into acc. */}}
{{define "tiled_product"}}
{{- range $kk := .Ks}}
        {
{{- range $q := $.Cols4}}
{{- if $.Swizzle}}
            let b{{$q}} = b_tile{{$.RS}}[{{$kk}}u * (BN / 4u) + (({{$q}}u * WX + tx) ^ {{index $.KSw $kk}}u)];
{{- else}}
            let b{{$q}} = b_tile{{$.RS}}[{{$kk}}u * (BN / 4u) + {{$q}}u * WX + tx];
{{- end}}
{{- end}}
{{- range $r4 := $.Rows4}}
{{- if $.Swizzle}}
            let a{{$r4}} = a_tile{{$.RS}}[{{$kk}}u * (BM / 4u) + ((ty * ({{$.TM}}u / 4u) + {{$r4}}u) ^ {{index $.KSw $kk}}u)];
{{- else}}
            let a{{$r4}} = a_tile{{$.RS}}[{{$kk}}u * (BM / 4u) + ty * ({{$.TM}}u / 4u) + {{$r4}}u];
{{- end}}
{{- end}}
{{- range $.FMAs}}
            acc[{{.Acc}}] += a{{.A}}.{{.C}} * b{{.Q}};
{{- end}}
        }
{{- end}}
{{- end}}
