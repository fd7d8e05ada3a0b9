{{/*
Softmax and log_softmax over the last axis: one workgroup per task, a task
being a row, or one segment of a long row.

Template parameters (backend/wgpu/softmax.go renders them):
  .Mode          "full": a task is a whole row: its max and Σ e^(x−max)
                 in one read (see Online below), then the outputs.
                 "stats": a task is a segment of a row; it writes the
                 segment's (max, Σ e^(x−max)) pair to dst.
                 "apply": a task is a segment again; it folds its row's
                 pairs from stats into the row's (max, sum) and writes its
                 segment's outputs.
                 "sweep" (software adapters, float32 softmax, a task is
                 a whole row): the max, then e^(x−max) written to dst
                 and summed, then dst divided by the sum; see Sweep.
                 "regs" (hardware adapters, rows of at most .Regs
                 elements or vec4s per invocation): a task is a whole row,
                 held in registers: read once, its max, then Σ e^(x−max)
                 from the registers, then the outputs written.
                 "rows" (hardware adapters, rows of at most 16 elements per
                 lane): a workgroup holds WorkgroupSize / .Lanes rows,
                 .Lanes invocations per row, each row in registers as in
                 "regs"; see Rows below.
                 "warp" (hardware adapters, rows of at most 16 units per
                 lane): as "rows", with the registers unrolled, the
                 bounds, the unravel and exp_f left out where they can
                 be; see Warp below.
  .Regs          "regs" and "rows": elements (vec4s with .Vec4) per
                 invocation
  .Lanes         "rows" and "warp": invocations per row (a power of two
                 ≤ WG)
  .Units         "warp": the registers x0, x1, … each invocation holds
                 (units: vec4s with .Vec4, else elements)
  .Exact         "warp": every row is exactly len(.Units) × .Lanes units,
                 so that no load or store is bounded
  .Pitch         "warp": src's rows are params.outer_strides[0].x apart
                 (at most one outer axis after collapsing), so a row's
                 start is one multiply rather than an unravel
  .ExactExp      "warp": exp_f instead of the mode's exp_neg
  .Vec4          "regs" and "sweep": src and dst bound as vec4s; the host takes it
                 when every row starts on a 16-byte boundary in both and
                 the row length is a multiple of 4
  .Log           log_softmax, (x − max) − ln Σ, instead of e^(x−max) / Σ
  .Src           WGSL type of the elements (f32 or f16; f16 computes in f32)
  .Enable        "enable f16;" for f16
  .WorkgroupSize invocations per workgroup, a power of two
  .Subgroups     the workgroup reductions meet within each subgroup by
                 subgroupMax/subgroupAdd, then across subgroups through one
                 slot per invocation in workgroup memory (two barriers
                 instead of log2 WorkgroupSize); needs the device's
                 subgroups feature

Why the shape of the kernel:
  - llvmpipe silently stops a shader's loops after 65,535 iterations per
    invocation in total. On software adapters the host splits rows longer
    than a few thousand elements per invocation into segments (stats, then
    apply), whose loops stay as short; on GPUs a row is always one task.
  - exp_f and log_f from math.wgsl, not WGSL's exp and log (dozens of ulp
    off on llvmpipe). The max is NaN-propagating by bit tests (WGSL may
    assume no NaN), so a NaN makes its row NaN, as in torch; a row whose
    max is −Inf (all −Inf) is NaN too, written explicitly rather than left
    to −Inf − (−Inf). A +Inf makes its row NaN (its e^(x−max) is NaN).
    Subgroups reduce the max as ordered u32 keys (max_key), in which NaN
    is the largest, so the integer subgroupMax keeps the rule.
  - Online (full and stats): the max and the sum in one read of the row
    (two in all, with the outputs', rather than three): each invocation
    keeps a running max and a sum rescaled when the max grows, and the
    invocations' pairs are merged by a max, then a sum of s·e^(m−max).
    One e^(−|x−max|) per element and selects, no branch (the lanes of a
    SIMD vector on llvmpipe would run both arms). The running max starts
    at the lowest finite f32, not −Inf, so that −Inf elements add
    e^(−Inf) = 0 rather than e^(NaN); a row's sum is then 0 exactly when
    all of it is −Inf (otherwise its max adds 1), which is how the dead
    row is told. NaN elements are caught by the largest magnitude bits
    seen, and make the invocation's max NaN.
  - Sweep (software adapters): there the work per element is what
    costs, not the bytes, and the online mode takes two exponentials per
    element (one in its read, one for the output). Three passes over a
    row that stays in the CPU's cache take one: the max, then e^(x−max)
    stored as the output and summed, then each output divided by the sum.
    An invocation reads back only what it wrote itself, so no barrier.
    vec4 loads matter more still: llvmpipe and lavapipe load a scalar per
    lane, so a vec4 moves four elements per load (4,096×1,024 rows: 0.19
    GB/s scalar, 0.52 vec4 on lavapipe). NaN, +Inf and all −Inf rows follow
    the online mode's rules: the max starts at the lowest finite f32, a
    NaN makes it NaN by the magnitude bits, and a zero sum is the dead
    row. float16 keeps the online mode (an f16 e^(x−max) would round
    before the division), and log_softmax too (its outputs need no
    exponential).
  - Regs (real GPUs): one scalar load at a time per invocation leaves too
    few bytes in flight to reach a GPU's bandwidth, and the online mode
    reads the row twice. With the row in registers each invocation issues
    all of its loads (.Regs of them, 16 bytes each with .Vec4) before any
    reduction, the max is exact before any exponential (one e^(x−max) per
    element, no rescaling), and the row is read once and written once.
    NaN, +Inf and all −Inf rows follow the same rules as above: NaN makes
    the max NaN (by the magnitude bits), +Inf gives e^(+Inf−Inf) = NaN,
    and a max of −Inf is the dead row.
  - Rows (real GPUs, short rows): one workgroup per row leaves a 1,024
    element row 4 elements per invocation, each waiting on its loads and
    two workgroup-wide reductions: latency-bound. Several rows per
    workgroup, .Lanes invocations each, keep 4–16 elements per invocation
    in flight. Each row's lanes meet through workgroup memory: every lane
    writes its partial to its own slot, one barrier, then every lane of a
    row folds the row's .Lanes slots itself (the same address across the
    row's lanes: a broadcast read), so a reduction costs one barrier for
    all rows of the workgroup, none between rows, and needs no subgroup
    size (WGSL knows it only at run time). The max and the sum use
    separate arrays, each written once per run, so no barrier follows the
    reads. NaN, +Inf and all −Inf rows follow the regs rules.
  - Warp (real GPUs, rows of up to 8 units per lane by default): what a
    CUDA softmax does. The "rows" mode holds its registers in an array
    indexed in loops (a compiler that does not unroll them keeps the
    array in memory, per invocation), finds a row's start by unravel
    (another private array), spends about two dozen operations per
    element in exp_f and divides per element. Here each register is its
    own variable, written out by the template (x0, x1, …, loaded before
    anything waits on them); a row of exactly .Lanes × len(.Units) units
    needs no bounds, and pads of other rows hold −Inf, which change
    neither max nor sum; rows one pitch apart start at one multiply;
    exp_neg takes only d ≤ 0 and needs no branch (the row's max decides
    the NaN rows: a NaN, +Inf or all −Inf max makes the row NaN, and
    otherwise every d is ≤ 0 or −Inf); the outputs are e·(1/Σ). With 32
    lanes per row a subgroup of 32 (NVIDIA's warp) is the row, so both
    folds are subgroupMax/subgroupAdd with no workgroup memory; the one
    barrier left (the subgroup size made workgroup-uniform) comes after
    the loads are issued. Other subgroup sizes and no subgroups fold
    through rows_max/rows_sum as "rows" does.
  - Subgroups: WGSL says nothing of how subgroups map onto
    local_invocation_index, and a subgroup may be partial. So one
    invocation per subgroup (subgroupElect) writes its subgroup's result
    into its own slot, the others the identity, and after one barrier each
    subgroup folds all slots, its invocations taking every sg_count-th
    slot from their rank (subgroupExclusiveAdd of 1). Each of the arrays
    keys and tree is written once per workgroup run on this path, so no
    barrier is needed after the reads.
*/}}
{{- .Enable}}
{{- if .Subgroups}}
enable subgroups;
{{- end}}

{{template "row_params"}}

{{- if eq .Mode "stats"}}
@group(0) @binding(0) var<storage, read_write> dst: array<vec2<f32>>;
{{- else if .Vec4}}
@group(0) @binding(0) var<storage, read_write> dst: array<vec4<{{.Src}}>>;
@group(0) @binding(1) var<storage, read> src: array<vec4<{{.Src}}>>;
{{- else}}
@group(0) @binding(0) var<storage, read_write> dst: array<{{.Src}}>;
{{- end}}
{{- if not .Vec4}}
@group(0) @binding(1) var<storage, read> src: array<{{.Src}}>;
{{- end}}
{{- if eq .Mode "apply"}}
@group(0) @binding(2) var<storage, read> stats: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> params: Params;
{{- else}}
@group(0) @binding(2) var<uniform> params: Params;
{{- end}}

const WG: u32 = {{.WorkgroupSize}}u;

var<workgroup> tree: array<f32, WG>;

{{template "strided" .}}
{{template "math" .}}
{{- if eq .Src "f16"}}
{{template "to_f16"}}
{{- end}}

fn fmax(a: f32, b: f32) -> f32 {
    if (is_nan(a)) {
        return a;
    }
    if (is_nan(b)) {
        return b;
    }
    return max(a, b);
}

fn is_neg_inf(x: f32) -> bool {
    return is_inf(x) && sign_bit(x);
}

{{- if .Subgroups}}
var<workgroup> keys: array<u32, WG>;
var<private> sg_rank: u32;  // this invocation's rank among its subgroup's
var<private> sg_count: u32; // its subgroup's active invocations

// max_key orders f32 as u32: keys compare as their values do, and NaN
// (either sign) is the largest key.
fn max_key(x: f32) -> u32 {
    if (is_nan(x)) {
        return 0xffffffffu;
    }
    let b = bitcast<u32>(x);
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn key_value(k: u32) -> f32 {
    if (k == 0xffffffffu) {
        return nan_f32();
    }
    return bitcast<f32>(select(~k, k & 0x7fffffffu, (k & 0x80000000u) != 0u));
}

// tree_max combines one value per invocation; every invocation of the
// workgroup must call it, at most once per run.
fn tree_max(lid: u32, v: f32) -> f32 {
    let k = subgroupMax(max_key(v));
    keys[lid] = select(0u, k, subgroupElect());
    workgroupBarrier();
    var a = 0u;
    for (var i = sg_rank; i < WG; i += sg_count) {
        a = max(a, keys[i]);
    }
    return key_value(subgroupMax(a));
}

{{- else}}
// tree_max combines one value per invocation; every invocation of the
// workgroup must call it.
fn tree_max(lid: u32, v: f32) -> f32 {
    tree[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s /= 2u) {
        if (lid < s) {
            tree[lid] = fmax(tree[lid], tree[lid + s]);
        }
        workgroupBarrier();
    }
    let r = tree[0];
    workgroupBarrier();
    return r;
}
{{- end}}
{{template "tree_sum" .}}

{{- if .Vec4}}

// load4 reads the vec4 holding the row's elements 4i … 4i+3 (base is a
// multiple of 4).
fn load4(base: u32, i: u32) -> vec4<f32> {
    return vec4<f32>(src[base / 4u + i]);
}

fn exp4(v: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(exp_f(v.x), exp_f(v.y), exp_f(v.z), exp_f(v.w));
}
{{- else}}

fn load(base: u32, j: u32) -> f32 {
    return f32(src[base + j * params.inner_stride]);
}
{{- end}}
{{- if eq .Mode "warp"}}
{{- template "softmax_warp_functions" .}}
{{- end}}
{{- if or (eq .Mode "regs") (eq .Mode "rows")}}

const REGS: u32 = {{.Regs}}u;
{{- end}}
{{- if or (eq .Mode "rows") (eq .Mode "warp")}}
const LANES: u32 = {{.Lanes}}u;
const ROWS_PER_WG: u32 = WG / LANES;

// One slot per invocation: its partial max, and its partial sum.
var<workgroup> row_max: array<f32, WG>;
var<workgroup> row_sum: array<f32, WG>;
{{- end}}

{{- if or (eq .Mode "rows") (eq .Mode "warp")}}
{{- if .Subgroups}}
var<workgroup> sg_width: u32;
{{- end}}

// rows_max and rows_sum combine one partial per invocation over the LANES
// invocations of its row (group is the row's first slot); every
// invocation of the workgroup must call each once per run. width is the
// subgroup size (workgroup-uniform; 0 without subgroups). With subgroups
// laid out in aligned runs (the host's probe): a subgroup of exactly
// LANES is one row, folded by subgroup operations alone, no barrier; a
// smaller one folds its lanes first and the row's lanes then read one
// slot per subgroup; a larger one would mix rows, so the slots are read
// one per lane.
fn rows_max(lid: u32, group: u32, width: u32, v: f32) -> f32 {
    var stride = 1u;
{{- if .Subgroups}}
    let sub = key_value(subgroupMax(max_key(v)));
    if (width == LANES) {
        return sub;
    }
    var mine = v;
    if (width < LANES) {
        mine = sub;
        stride = width;
    }
    row_max[lid] = mine;
{{- else}}
    row_max[lid] = v;
{{- end}}
    workgroupBarrier();
    var m = row_max[group];
    for (var i = stride; i < LANES; i += stride) {
        m = fmax(m, row_max[group + i]);
    }
    return m;
}

fn rows_sum(lid: u32, group: u32, width: u32, v: f32) -> f32 {
    var stride = 1u;
{{- if .Subgroups}}
    let sub = subgroupAdd(v);
    if (width == LANES) {
        return sub;
    }
    var mine = v;
    if (width < LANES) {
        mine = sub;
        stride = width;
    }
    row_sum[lid] = mine;
{{- else}}
    row_sum[lid] = v;
{{- end}}
    workgroupBarrier();
    var s = 0.0;
    for (var i = 0u; i < LANES; i += stride) {
        s += row_sum[group + i];
    }
    return s;
}
{{- end}}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32{{if and .Subgroups (or (eq .Mode "rows") (eq .Mode "warp"))}}, @builtin(subgroup_size) sg_size: u32{{end}}) {
    math_zero = params.zero;
{{- if and .Subgroups (ne .Mode "rows") (ne .Mode "warp")}}
    sg_rank = subgroupExclusiveAdd(1u);
    sg_count = subgroupAdd(1u);
{{- end}}
    let task = wid.y * params.grid_x + wid.x;
{{- if eq .Mode "warp"}}
{{- template "softmax_warp_body" .}}
{{- else if eq .Mode "rows"}}
    // params.tasks is the row count here; a workgroup holds ROWS_PER_WG.
    if (task * ROWS_PER_WG >= params.tasks) {
        return; // uniform: the whole workgroup leaves
    }
{{- if .Subgroups}}
    if (lid == 0u) {
        sg_width = sg_size;
    }
    let width = workgroupUniformLoad(&sg_width);
{{- else}}
    let width = 0u;
{{- end}}
    let row = task * ROWS_PER_WG + lid / LANES;
    let lane = lid % LANES;
    let group = lid - lane; // the row's first slot
    // Lanes past the last row hold no elements but meet the barriers.
    let row_len = select(0u, {{if .Vec4}}params.n / 4u{{else}}params.n{{end}}, row < params.tasks);
    let base = strided_at(unravel(min(row, params.tasks - 1u), params.outer_shape, params.outer_rank), params.outer_strides, params.src_offset);
{{- template "softmax_register_row" .}}
{{- else}}
    if (task >= params.tasks) {
        return; // uniform: the whole workgroup leaves
    }
    let row = task / params.segs;
    let start = (task % params.segs) * params.seg_len;
    let end = min(start + params.seg_len, params.n);
    let base = strided_at(unravel(row, params.outer_shape, params.outer_rank), params.outer_strides, params.src_offset);

{{- if eq .Mode "regs"}}
    // This invocation's elements (vec4s) lid, lid + WG, …: all loads issued
    // before the first reduction.
    let row_len = {{if .Vec4}}params.n / 4u{{else}}params.n{{end}};
{{- template "softmax_register_row" .}}
{{- else if eq .Mode "sweep"}}
    // The max first, then e^(x−max) stored as the output and summed, then
    // the outputs divided by the sum: one exponential per element where
    // the online read and the output pass take two (see Sweep above).
{{- if .Vec4}}
    let units = params.n / 4u;
    let out_at = (params.dst_offset + row * params.n) / 4u;
    var m4 = vec4<f32>(bitcast<f32>(0xff7fffffu)); // lowest finite, as in the online loop
    var bits4 = vec4<u32>(0u);
    for (var i = lid; i < units; i += WG) {
        let x = load4(base, i);
        bits4 = max(bits4, bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu));
        m4 = max(m4, x);
    }
    var m = max(max(m4.x, m4.y), max(m4.z, m4.w));
    let bits = max(max(bits4.x, bits4.y), max(bits4.z, bits4.w));
{{- else}}
    var m = bitcast<f32>(0xff7fffffu); // lowest finite, as in the online loop
    var bits = 0u;
    for (var j = start + lid; j < end; j += WG) {
        let x = load(base, j);
        bits = max(bits, bitcast<u32>(x) & 0x7fffffffu);
        m = max(m, x);
    }
{{- end}}
    if (bits > 0x7f800000u) {
        m = nan_f32();
    }
    m = tree_max(lid, m);
{{- if .Vec4}}
    var s4 = vec4<f32>(0.0);
    for (var i = lid; i < units; i += WG) {
        let e = exp4(load4(base, i) - vec4<f32>(m));
        dst[out_at + i] = e;
        s4 += e;
    }
    let s = tree_sum(lid, (s4.x + s4.y) + (s4.z + s4.w));
{{- else}}
    var s = 0.0;
    for (var j = start + lid; j < end; j += WG) {
        let e = exp_f(load(base, j) - m);
        dst[params.dst_offset + row * params.n + j] = e;
        s += e;
    }
    s = tree_sum(lid, s);
{{- end}}
{{- else if eq .Mode "apply"}}
    var m = -inf_f32();
    for (var k = lid; k < params.segs; k += WG) {
        m = fmax(m, stats[row * params.segs + k].x);
    }
    m = tree_max(lid, m);
    var s = 0.0;
    for (var k = lid; k < params.segs; k += WG) {
        let p = stats[row * params.segs + k];
        if (!is_neg_inf(p.x)) {
            s += p.y * select(exp_f(p.x - m), 1.0, p.x == m);
        }
    }
    s = tree_sum(lid, s);
{{- else}}
    var lm = bitcast<f32>(0xff7fffffu); // lowest finite: see the header
    var ls = 0.0;
    var bits = 0u; // largest magnitude bits seen: NaN when > 0x7f800000
    for (var j = start + lid; j < end; j += WG) {
        let x = load(base, j);
        bits = max(bits, bitcast<u32>(x) & 0x7fffffffu);
        // One exponential, no branch: a new max rescales the sum by
        // e^(lm−x) and adds e⁰; any other x adds e^(x−lm).
        let d = x - lm;
        let e = exp_f(-abs(d));
        ls = select(ls + e, ls * e + 1.0, d > 0.0);
        lm = max(lm, x);
    }
    if (bits > 0x7f800000u) {
        lm = nan_f32();
    }
    var m = tree_max(lid, lm);
    // e^(lm−m) is exactly 1 at lm = m; +Inf − +Inf makes the sum NaN.
    let s = tree_sum(lid, ls * exp_f(lm - m));
    if (s == 0.0) {
        m = -inf_f32(); // all −Inf
    }
{{- end}}

{{- if eq .Mode "regs"}}
{{- else if eq .Mode "sweep"}}
    // A row whose max is −Inf (all −Inf) or NaN is NaN; +Inf gives
    // e^(+Inf−Inf) = NaN in the sum, and so a NaN row.
    let dead = is_neg_inf(m) || s == 0.0;
{{- if .Vec4}}
    for (var i = lid; i < units; i += WG) {
        dst[out_at + i] = select(dst[out_at + i] / vec4<f32>(s), vec4<f32>(nan_f32()), dead);
    }
{{- else}}
    for (var j = start + lid; j < end; j += WG) {
        let at = params.dst_offset + row * params.n + j;
        dst[at] = select(dst[at] / s, nan_f32(), dead);
    }
{{- end}}
{{- else if eq .Mode "stats"}}
    if (lid == 0u) {
        dst[task] = vec2<f32>(m, s);
    }
{{- else}}
    let dead = is_neg_inf(m); // all −Inf: NaN
{{- if .Log}}
    let lns = log_f(s);
{{- end}}
    for (var j = start + lid; j < end; j += WG) {
        let x = load(base, j);
{{- if .Log}}
        var y = (x - m) - lns;
{{- else}}
        var y = exp_f(x - m) / s;
{{- end}}
        if (dead) {
            y = nan_f32();
        }
        dst[params.dst_offset + row * params.n + j] = {{if eq .Src "f16"}}to_f16(y){{else}}y{{end}};
    }
{{- end}}
{{- end}}
}

{{- define "softmax_register_row"}}
{{- /* The "rows" and "regs" modes' body: each invocation holds its
elements lane, lane + stride, … of the row in registers (all loads
issued before the first reduction), then the exact max, the sum of
e^(x − max) and one store each. "rows" has LANES invocations per row and
meets its row's lanes through rows_max/rows_sum; "regs" is one row per
workgroup through the workgroup tree. Needs row_len, base and row. */}}
{{- $rows := eq .Mode "rows"}}
{{- $lane := "lid"}}{{$stride := "WG"}}{{if $rows}}{{$lane = "lane"}}{{$stride = "LANES"}}{{end}}
{{- $t := "f32"}}{{if .Vec4}}{{$t = "vec4<f32>"}}{{end}}
    var xs: array<{{$t}}, REGS>;
    for (var k = 0u; k < REGS; k++) {
        let i = {{$lane}} + k * {{$stride}};
        if (i < row_len) {
            xs[k] = {{if .Vec4}}load4(base, i){{else}}load(base, i){{end}};
        }
    }
    var lm = -inf_f32();
    var bits = 0u; // largest magnitude bits seen: NaN when > 0x7f800000
    for (var k = 0u; k < REGS; k++) {
        if ({{$lane}} + k * {{$stride}} < row_len) {
            let x = xs[k];
{{- if .Vec4}}
            let b = bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu);
            bits = max(bits, max(max(b.x, b.y), max(b.z, b.w)));
            lm = max(lm, max(max(x.x, x.y), max(x.z, x.w)));
{{- else}}
            bits = max(bits, bitcast<u32>(x) & 0x7fffffffu);
            lm = max(lm, x);
{{- end}}
        }
    }
    if (bits > 0x7f800000u) {
        lm = nan_f32();
    }
    let m = {{if $rows}}rows_max(lid, group, width, lm){{else}}tree_max(lid, lm){{end}};
    var ls = 0.0;
    for (var k = 0u; k < REGS; k++) {
        if ({{$lane}} + k * {{$stride}} < row_len) {
{{- if .Vec4}}
            let e = exp4(xs[k] - m);
            ls += (e.x + e.y) + (e.z + e.w);
{{- else}}
            let e = exp_f(xs[k] - m);
            ls += e;
{{- end}}
{{- if not .Log}}
            xs[k] = e;
{{- end}}
        }
    }
    let s = {{if $rows}}rows_sum(lid, group, width, ls){{else}}tree_sum(lid, ls){{end}};
    let dead = is_neg_inf(m); // all −Inf: NaN
{{- if .Log}}
    let lns = log_f(s);
{{- end}}
    for (var k = 0u; k < REGS; k++) {
        let i = {{$lane}} + k * {{$stride}};
        if (i < row_len) {
{{- if .Log}}
            var y = (xs[k] - m) - lns;
{{- else}}
            var y = xs[k] / s;
{{- end}}
            if (dead) {
                y = {{$t}}(nan_f32());
            }
{{- if .Vec4}}
            dst[params.dst_offset / 4u + row * row_len + i] = {{if eq .Src "f16"}}vec4<f16>(to_f16(y.x), to_f16(y.y), to_f16(y.z), to_f16(y.w)){{else}}y{{end}};
{{- else}}
            dst[params.dst_offset + row * params.n + i] = {{if eq .Src "f16"}}to_f16(y){{else}}y{{end}};
{{- end}}
        }
    }
{{- end}}


{{- define "softmax_warp_functions"}}
{{- $t := "f32"}}{{$u := "u32"}}{{$i := "i32"}}
{{- if .Vec4}}{{$t = "vec4<f32>"}}{{$u = "vec4<u32>"}}{{$i = "vec4<i32>"}}{{end}}

// hmax and hsum fold one register's elements.
fn hmax(v: {{$t}}) -> f32 {
    return {{if .Vec4}}max(max(v.x, v.y), max(v.z, v.w)){{else}}v{{end}};
}

fn hsum(v: {{$t}}) -> f32 {
    return {{if .Vec4}}(v.x + v.y) + (v.z + v.w){{else}}v{{end}};
}

// magnitude is |v|'s largest bits: above 0x7f800000 exactly when v holds a
// NaN.
fn magnitude(v: {{$t}}) -> u32 {
    let b = bitcast<{{$u}}>(v) & {{$u}}(0x7fffffffu);
    return {{if .Vec4}}max(max(b.x, b.y), max(b.z, b.w)){{else}}b{{end}};
}

// warp_out is one register's outputs in dst's type: (x − m) − ln Σ for
// log_softmax (k = ln Σ), else x's e^(x−m) times k = 1/Σ; NaN in a dead
// row.
fn warp_out(x: {{$t}}, m: f32, k: f32, dead: bool) -> {{if .Vec4}}vec4<{{.Src}}>{{else}}{{.Src}}{{end}} {
    let y = select({{if .Log}}(x - m) - k{{else}}x * k{{end}}, {{$t}}(nan_f32()), dead);
{{- if eq .Src "f16"}}
    return {{if .Vec4}}vec4<f16>(to_f16(y.x), to_f16(y.y), to_f16(y.z), to_f16(y.w)){{else}}to_f16(y){{end}};
{{- else}}
    return y;
{{- end}}
}
{{- if .ExactExp}}

fn exp_neg(d: {{$t}}) -> {{$t}} {
    return {{if .Vec4}}vec4<f32>(exp_f(d.x), exp_f(d.y), exp_f(d.z), exp_f(d.w)){{else}}exp_f(d){{end}};
}
{{- else}}

// exp_neg is e^d for d ≤ 0 or −Inf, the only arguments once the row's max
// is finite (rows with a NaN, a +Inf or all −Inf are told by their max and
// never use it): Cody–Waite reduction d = n·ln2 + r, |r| ≤ ln2/2 (opaque
// keeps d − n·LN2_HI exact), e^r by Taylor to r⁷ (truncation under 0.1
// ulp), and 2ⁿ from the exponent bits in two exact steps, so that results
// under 2⁻¹²⁶ round as subnormals rather than vanish. No branch, no
// ldexp: about a dozen operations against exp_f's two dozen, which
// matters when the row is read at memory speed.
fn exp_neg(d: {{$t}}) -> {{$t}} {
    let x = max(d, {{$t}}(-104.0)); // e^−104 < 2⁻¹⁴⁹: the result rounds to 0
    let n = round(x * 1.44269502);
    let hi = bitcast<{{$t}}>(bitcast<{{$u}}>(x - n * 0.693145751953125) | {{$u}}(math_zero));
    let r = hi - n * 1.42860677e-06;
    let q = 5.000000000e-01 + r * (1.666666716e-01 + r * (4.166666791e-02 + r * (8.333333768e-03 +
        r * (1.388888923e-03 + r * 1.984127011e-04))));
    let er = 1.0 + (r + r * r * q);
    // n ∈ [−150, 0]: 2^(n+64) is a normal float, then 2⁻⁶⁴.
    let p = bitcast<{{$t}}>({{$u}}({{$i}}(n) + 191) << {{$u}}(23u));
    return er * p * 5.42101086e-20;
}
{{- end}}
{{- end}}

{{- define "softmax_warp_body"}}
{{- /* The "warp" mode's main: LANES invocations per row, ROWS_PER_WG rows
per workgroup; each invocation holds the row's units lane, lane + LANES, …
in registers x0, x1, … (unrolled: no array, so nothing a compiler could
leave in memory), loaded before anything waits on them. */}}
{{- $t := "f32"}}{{if .Vec4}}{{$t = "vec4<f32>"}}{{end}}
    // params.tasks is the row count; a workgroup holds ROWS_PER_WG.
    if (task * ROWS_PER_WG >= params.tasks) {
        return; // uniform: the whole workgroup leaves
    }
    let row = task * ROWS_PER_WG + lid / LANES;
    let lane = lid % LANES;
    let group = lid - lane; // the row's first slot
    let live = row < params.tasks;
    // Lanes past the last row load the last row again (in bounds, never
    // stored) and meet the barriers.
    let load_row = min(row, params.tasks - 1u);
{{- if .Pitch}}
    // Rows params.outer_strides[0].x apart: no unravel.
    let base = params.src_offset + load_row * params.outer_strides[0].x;
{{- else}}
    let base = strided_at(unravel(load_row, params.outer_shape, params.outer_rank), params.outer_strides, params.src_offset);
{{- end}}
    let row_len = {{if .Vec4}}params.n / 4u{{else}}params.n{{end}};
    // Units past the row hold −Inf: they change neither the max (nor its
    // NaN test) nor the sum.
{{- range .Units}}
{{- if $.Exact}}
    var x{{.}} = {{if $.Vec4}}load4(base, lane + {{.}}u * LANES){{else}}load(base, lane + {{.}}u * LANES){{end}};
{{- else}}
    var x{{.}} = {{$t}}(-inf_f32());
    if (lane + {{.}}u * LANES < row_len) {
        x{{.}} = {{if $.Vec4}}load4(base, lane + {{.}}u * LANES){{else}}load(base, lane + {{.}}u * LANES){{end}};
    }
{{- end}}
{{- end}}
{{- if .Subgroups}}
    // After the loads are issued, so that this barrier waits on none.
    if (lid == 0u) {
        sg_width = sg_size;
    }
    let width = workgroupUniformLoad(&sg_width);
{{- else}}
    let width = 0u;
{{- end}}
    // The lane's max, and its largest magnitude bits (NaN when above
    // 0x7f800000: WGSL's max may drop NaNs).
    let vm = {{range .Units}}{{if .}}max({{end}}{{end}}x0{{range .Units}}{{if .}}, x{{.}}){{end}}{{end}};
    let bits = {{range .Units}}{{if .}}max({{end}}{{end}}magnitude(x0){{range .Units}}{{if .}}, magnitude(x{{.}})){{end}}{{end}};
    var lm = hmax(vm);
    if (bits > 0x7f800000u) {
        lm = nan_f32();
    }
    let m = rows_max(lid, group, width, lm);
    // A NaN, a +Inf (e^(+Inf − +Inf)) or all −Inf: the row is NaN.
    let dead = (bitcast<u32>(m) & 0x7fffffffu) >= 0x7f800000u;
    let mm = select(m, 0.0, dead); // keeps exp_neg's argument ≤ 0
{{- if .Log}}
    var ls = 0.0;
{{- range .Units}}
    ls += hsum(exp_neg(x{{.}} - mm));
{{- end}}
{{- else}}
{{- range .Units}}
    x{{.}} = exp_neg(x{{.}} - mm);
{{- end}}
    var ls = hsum(x0){{range .Units}}{{if .}} + hsum(x{{.}}){{end}}{{end}};
{{- end}}
    let s = rows_sum(lid, group, width, ls);
{{- if .Log}}
    let lns = log_f(s);
{{- else}}
    let inv = 1.0 / s;
{{- end}}
    if (!live) {
        return; // after the last barrier
    }
    let dst_row = {{if .Vec4}}params.dst_offset / 4u{{else}}params.dst_offset{{end}} + row * row_len;
{{- range .Units}}
{{- if $.Exact}}
    dst[dst_row + lane + {{.}}u * LANES] = warp_out(x{{.}}, mm, {{if $.Log}}lns{{else}}inv{{end}}, dead);
{{- else}}
    if (lane + {{.}}u * LANES < row_len) {
        dst[dst_row + lane + {{.}}u * LANES] = warp_out(x{{.}}, mm, {{if $.Log}}lns{{else}}inv{{end}}, dead);
    }
{{- end}}
{{- end}}
{{- end}}

{{- define "tree_sum"}}
{{- /* tree_sum, shared by softmax.wgsl and layernorm.wgsl: the sum of one
f32 per invocation over a workgroup of WG. It needs var<workgroup> tree:
array<f32, WG>, and with .Subgroups the privates sg_rank and sg_count
(this invocation's rank in its subgroup, the subgroup's active count),
set at the top of main. */}}
{{- if .Subgroups}}

// tree_sum combines one value per invocation; every invocation of the
// workgroup must call it, at most once per run (tree is written once).
fn tree_sum(lid: u32, v: f32) -> f32 {
    let t = subgroupAdd(v);
    tree[lid] = select(0.0, t, subgroupElect());
    workgroupBarrier();
    var a = 0.0;
    for (var i = sg_rank; i < WG; i += sg_count) {
        a += tree[i];
    }
    return subgroupAdd(a);
}
{{- else}}

// tree_sum combines one value per invocation; every invocation of the
// workgroup must call it.
fn tree_sum(lid: u32, v: f32) -> f32 {
    tree[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s /= 2u) {
        if (lid < s) {
            tree[lid] = tree[lid] + tree[lid + s];
        }
        workgroupBarrier();
    }
    let r = tree[0];
    workgroupBarrier();
    return r;
}
{{- end}}
{{- end}}
