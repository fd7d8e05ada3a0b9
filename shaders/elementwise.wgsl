// Elementwise kernels: dst[i] = op(a[i]) or op(a[i], b[i]).
//
// Template parameters (backend/wgpu renders them with text/template):
//   .Inputs        the distinct input arrays, each {Name, Binding}
//   .A, .B         the array each operand is read from: an input's name, or
//                  "dst" when the operand is the destination itself (a buffer
//                  cannot be bound writable and read-only at once); .B is
//                  empty for one-input ops
//   .Expr          a WGSL expression of a (and b) computing one element
//   .ParamsBinding the binding of the uniform parameters
//   .WorkgroupSize invocations per workgroup
//
// One invocation computes one element, with no loop: software rasterizers
// such as llvmpipe silently stop a loop after 65,535 iterations. The grid is
// two-dimensional so that more than 65,535 workgroups fit in one dispatch;
// params.row_stride is the number of invocations in one grid row.

struct Params {
    n: u32,
    row_stride: u32,
}

@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
{{- range .Inputs}}
@group(0) @binding({{.Binding}}) var<storage, read> {{.Name}}: array<f32>;
{{- end}}
@group(0) @binding({{.ParamsBinding}}) var<uniform> params: Params;

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.y * params.row_stride + id.x;
    if (i >= params.n) {
        return;
    }
    let a = {{.A}}[i];
{{- if .B}}
    let b = {{.B}}[i];
{{- end}}
    dst[i] = {{.Expr}};
}
