// Gather along one axis, as torch.gather:
//
//     dst[i] = src[i with its axis coordinate replaced by idx[i]]
//
// Template parameters (backend/wgpu/index.go renders them):
//   .Enable        "enable f16;" when .T is f16, else empty
//   .T             WGSL type of the values: f32, f16 or i32
//   .WorkgroupSize invocations per workgroup
//
// One invocation per element of dst. The only loop walks the ≤ 8 axes to
// turn the linear index into coordinates (unravel, strided.wgsl), far below
// the 65,535 iterations after which llvmpipe silently stops a loop.
//
// An index outside [0, axis_size) must not read out of bounds and must not
// fail silently: the element becomes 0 and the first such index is recorded
// in the device's fault word, which the host turns into an
// ErrIndexOutOfRange at the next Read or Sync (backend/wgpu/fault.go).
{{.Enable}}

struct Params {
    n: u32,             // elements of dst and idx
    row_stride: u32,    // invocations per row of the 2-D dispatch grid
{{- template "axis_params"}}  // axis_size: src's; shape: dst's (= idx's)
    src_strides: array<vec4<u32>, 2>,
    idx_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{.T}}>;
@group(0) @binding(1) var<storage, read_write> fault: array<atomic<u32>, 4>;
@group(0) @binding(2) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(3) var<storage, read> idx: array<i32>;
@group(0) @binding(4) var<uniform> params: Params;

{{template "strided" .}}
{{template "nn_fault"}}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- template "flat_index"}}
    // The index sits at i's coordinates; src at the same coordinates but
    // for the axis, which the index replaces.
    var c = unravel(i, params.shape, params.rank);
    let j = idx[strided_at(c, params.idx_strides, params.idx_offset)];
    if (j < 0 || u32(j) >= params.axis_size) {
        dst[params.dst_offset + i] = {{.T}}(0);
        report_fault(FAULT_GATHER, j, params.axis_size, params.axis);
        return;
    }
    c[params.axis / 4u][params.axis % 4u] = u32(j);
    dst[params.dst_offset + i] = src[strided_at(c, params.src_strides, params.src_offset)];
}
