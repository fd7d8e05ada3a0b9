// Elementwise kernels of one input: dst[i] = OP(src[i]).
// Template: {{.Op}} is a WGSL expression of x; {{.WorkgroupSize}} the
// invocations per workgroup. One invocation computes one element; the grid
// is two-dimensional so that more than 65,535 workgroups fit in a dispatch.

struct Params {
    n: u32,
    row_stride: u32, // invocations per grid row: workgroups in x × workgroup size
}

@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

fn op(x: f32) -> f32 {
    return {{.Op}};
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.y * params.row_stride + id.x;
    if (i < params.n) {
        dst[i] = op(src[i]);
    }
}
