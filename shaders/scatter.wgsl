// Scatter-add along one axis, as torch.Tensor.scatter_add_:
//
//     dst[i with its axis coordinate replaced by idx[i]] += src[i]
//
// Template parameters (backend/wgpu/index.go renders them):
//   .Enable        "enable f16;" when .T is f16, else empty
//   .T             WGSL type of src: f32, f16 or i32
//   .Mode          how an addition reaches dst: "int" (atomicAdd on i32),
//                  "float" (compare-exchange on the f32 bit pattern) or
//                  "half" (compare-exchange on the u32 word holding the f16)
//   .WorkgroupSize invocations per workgroup
//
// One invocation per element of src. Several may target one element of dst,
// so every update is atomic. WGSL has atomics on u32 and i32 only, so a
// float addition is a compare-exchange loop: read the bits, add in f32,
// swap in the sum if nobody changed the word meanwhile. Each failed swap
// means another invocation's swap succeeded, so the loop is bounded by the
// contention; its cap keeps it below the 65,535 iterations after which
// llvmpipe silently stops a loop.
//
// An index outside [0, axis_size) is skipped and recorded in the device's
// fault word (backend/wgpu/fault.go).
{{.Enable}}

struct Params {
    n: u32,             // elements of src and idx
    row_stride: u32,    // invocations per row of the 2-D dispatch grid
{{- template "axis_params"}}  // axis_size: dst's; shape: src's (= idx's)
    dst_strides: array<vec4<u32>, 2>,
    src_strides: array<vec4<u32>, 2>,
    idx_strides: array<vec4<u32>, 2>,
}

{{- if eq .Mode "int"}}
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<i32>>;
{{- else}}
@group(0) @binding(0) var<storage, read_write> dst: array<atomic<u32>>;
{{- end}}
@group(0) @binding(1) var<storage, read_write> fault: array<atomic<u32>, 4>;
@group(0) @binding(2) var<storage, read> idx: array<i32>;
@group(0) @binding(3) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(4) var<uniform> params: Params;

// The most compare-exchange attempts one addition makes.
const MAX_TRIES: u32 = 65000u;

{{template "strided" .}}
{{template "nn_fault"}}

{{if eq .Mode "int"}}
fn add(e: u32, v: {{.T}}) {
    atomicAdd(&dst[e], v);
}
{{- else if eq .Mode "float"}}
fn add(e: u32, v: f32) {
    var old = atomicLoad(&dst[e]);
    for (var t = 0u; t < MAX_TRIES; t++) {
        let r = atomicCompareExchangeWeak(&dst[e], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (r.exchanged) {
            return;
        }
        old = r.old_value;
    }
}
{{- else}}
// Element e is the low (even e) or high (odd e) half of word e/2; the sum
// is computed in f32 and rounded back to f16, as the CPU backend does.
fn add(e: u32, v: f32) {
    let w = e / 2u;
    let shift = (e % 2u) * 16u;
    let keep = ~(0xffffu << shift);
    var old = atomicLoad(&dst[w]);
    for (var t = 0u; t < MAX_TRIES; t++) {
        let sum = unpack2x16float(old >> shift).x + v;
        // pack2x16float leaves values beyond f16's range undefined; they
        // round to ±Inf (0x7c00, 0xfc00) as IEEE-754 does.
        var half = pack2x16float(vec2<f32>(sum, 0.0)) & 0xffffu;
        if (abs(sum) >= 65520.0) {
            half = select(0x7c00u, 0xfc00u, sum < 0.0);
        }
        let r = atomicCompareExchangeWeak(&dst[w], old, (old & keep) | (half << shift));
        if (r.exchanged) {
            return;
        }
        old = r.old_value;
    }
}
{{- end}}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- template "flat_index"}}
    // The index and src sit at i's coordinates; dst at the same
    // coordinates but for the axis, which the index replaces.
    var c = unravel(i, params.shape, params.rank);
    let j = idx[strided_at(c, params.idx_strides, params.idx_offset)];
    if (j < 0 || u32(j) >= params.axis_size) {
        report_fault(FAULT_SCATTER_ADD, j, params.axis_size, params.axis);
        return;
    }
    let v = src[strided_at(c, params.src_strides, params.src_offset)];
    c[params.axis / 4u][params.axis % 4u] = u32(j);
{{- if eq .Mode "int"}}
    add(strided_at(c, params.dst_strides, params.dst_offset), v);
{{- else}}
    add(strided_at(c, params.dst_strides, params.dst_offset), f32(v));
{{- end}}
}
