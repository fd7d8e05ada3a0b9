{{/*
The elementwise kernel: dst[i] = f(a[i], b[i], c[i]) over row-major index i
of dst's shape, for Fill, Random, Copy, Unary, Binary and Where
(backend/wgpu/elementwise*.go renders it).

One invocation computes one element, with no loop over elements: llvmpipe
silently stops a shader's loops after 65,535 iterations. The grid is
two-dimensional so that more than 65,535 workgroups fit in one dispatch;
params.row_stride is the number of invocations in one grid row.

Template data (type ewShader):
  .Enable         "enable f16;" or ""
  .WorkgroupSize  invocations per workgroup
  .Math, .Philox  include the "math" (math.wgsl) and "philox" (random.wgsl)
                  helpers
  .DstType        WGSL storage type of dst
  .DstStrided     dst is addressed through its strides, else dst_offset + i
  .Inputs         the buffers read, each {Binding, Type}, bound as in<Binding>
  .Reads          the operands, each {Name, Array, Strided, Slot, Load}:
                  let <Name> = <Load>(<Array>[index]), where Array is an
                  input ("in1", …) or "dst" (in place: a buffer is bound
                  once) and Slot picks its offset and strides in params
  .Unravel        some operand is strided: compute every operand's offset
                  at once (strided_offsets, strided.wgsl)
  .Value          the WGSL expression of dst's new element, of DstType, over
                  the operands, i, and params.f / params.u

The axes are the views' after merging (backend/wgpu/elementwise_layout.go),
so a contiguous operand needs no strides at all.
*/}}
{{- .Enable}}
struct Params {
    n: u32,
    rank: u32,
    row_stride: u32,
    zero: u32,
    // Element offsets of dst, a, b and c.
    offsets: vec4<u32>,
    // Op constants: Unary's Alpha, Beta; Fill's start and step.
    f: vec4<f32>,
    // Integer constants: Int32 Clamp's bounds, Fill's exact ints,
    // Random's key and counter offset.
    u: vec4<u32>,
    shape: array<vec4<u32>, 2>,
    // Strides of dst, a, b and c.
    strides: array<array<vec4<u32>, 2>, 4>,
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{.DstType}}>;
{{- range .Inputs}}
@group(0) @binding({{.Binding}}) var<storage, read> in{{.Binding}}: array<{{.Type}}>;
{{- end}}
@group(0) @binding({{len .Inputs | add 1}}) var<uniform> params: Params;
{{if .Unravel}}{{template "strided_params" .}}{{end}}
{{if .Math}}{{template "math" .}}{{if .Enable}}{{template "math_f16" .}}{{end}}{{end}}
{{if .Philox}}{{template "philox" .}}{{end}}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- template "flat_index"}}
{{- if .Math}}
    math_zero = params.zero;
{{- end}}
{{- if .Unravel}}
    let at = strided_offsets(i);
{{- end}}
{{- range .Reads}}
    let {{.Name}} = {{.Load}}({{.Array}}[{{if .Strided}}at[{{.Slot}}]{{else}}params.offsets[{{.Slot}}] + i{{end}}]);
{{- end}}
    dst[{{if .DstStrided}}at[0]{{else}}params.offsets[0] + i{{end}}] = {{.Value}};
}
