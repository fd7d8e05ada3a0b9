{{/*
The elementwise kernel: dst[i] = f(a[i], b[i], c[i]) over row-major index i
of dst's shape, for Fill, Random, Copy, Unary, Binary and Where
(backend/wgpu/elementwise*.go renders it).

Two paths, with no loop over elements (llvmpipe silently stops a shader's
loops after 65,535 iterations); the grid is two-dimensional so that more
than 65,535 workgroups fit in one dispatch, params.row_stride is the number
of invocations in one grid row:
  - general (.Lanes 0): one invocation computes one element, unravelling i
    over the strides of every strided operand;
  - contiguous (.Lanes > 0, every operand and dst dense): one invocation
    computes .Lanes elements with no index math but the offsets. With .Vec4
    (every offset a multiple of 4, given in params.offsets in vec4 units)
    the buffers are arrays of vec4 and each of .Chunks is one vec4 load per
    operand and one vec4 store; the last invocation, past a multiple of 4,
    falls back to single components. With several .Chunks (.Lanes 8, the
    WEBTENSOR_EW_LANES=8 variant) an invocation's chunks are a workgroup
    size apart in vec4s, every load is issued before the arithmetic, and
    the last workgroup falls back to single components. With .Whole (n a
    multiple of 4) there is no single-component fallback, only whole
    vec4s: a partial store anywhere in the kernel, even one never taken,
    slowed every element's store on llvmpipe (1.3×) and lavapipe (1.05×).
    Without .Vec4 the .Lanes elements of an invocation are a
    workgroup-size apart (coalesced scalar loads).
    One invocation computing one element leaves a GPU bound by the rate of
    invocations, not by memory bandwidth.
The value is ew_value(i, a, b, c): per element, so Fill and Random give
every element the value of its index i on every path.

WGSL fast-math: an implementation may assume no NaN or infinity and fold
x / x to 1 or x − x to 0 when it can prove both operands are one value.
Each operand is therefore its own load from its own offset word in params
(two operands on one buffer read it through params.offsets[1] and [2]),
so that a compiler cannot prove them equal. An operand alone on its
buffer at offset 0 (and dst at offset 0) is indexed with no offset at
all (.At, .DstAt empty): the uniform word and its add cost llvmpipe about
2% of a streaming op's bandwidth.

Template data (type ewShader):
  .Enable         "enable f16;" or ""
  .WorkgroupSize  invocations per workgroup
  .Math, .Philox  include the "math" (math.wgsl) and "philox" (random.wgsl)
                  helpers
  .DstType        WGSL storage type of dst
  .DstStrided     dst is addressed through its strides, else dst_offset + i
  .Inputs         the buffers read, each {Binding, Type}, bound as in<Binding>
  .DstAt          "params.offsets[0] + ", or "" for dst at offset 0
  .Reads          the operands, each {Name, Array, Strided, Slot, At, Load,
                  Type}: let <Name> = <Load>(<Array>[index]), where Array
                  is an input ("in1", …) or "dst" (in place: a buffer is
                  bound once), Slot picks its offset and strides in params,
                  At is the contiguous index's offset ("params.offsets[Slot]
                  + " or "") and Type is the operand's type after Load
  .Lanes, .Vec4,  the contiguous path: elements per invocation, vec4
  .Whole,         buffers, n a multiple of 4 (with .Vec4), the vec4 chunks
  .Chunks, .Idx   (0..Lanes/4-1) and the lanes (0..Lanes-1) to unroll
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

@group(0) @binding(0) var<storage, read_write> dst: array<{{if .Vec4}}vec4<{{.DstType}}>{{else}}{{.DstType}}{{end}}>;
{{- range .Inputs}}
@group(0) @binding({{.Binding}}) var<storage, read> in{{.Binding}}: array<{{if $.Vec4}}vec4<{{.Type}}>{{else}}{{.Type}}{{end}}>;
{{- end}}
@group(0) @binding({{len .Inputs | add 1}}) var<uniform> params: Params;
{{if .Unravel}}{{template "strided_params" .}}{{end}}
{{if .Math}}{{template "math" .}}{{if .Enable}}{{template "math_f16" .}}{{end}}{{end}}
{{if .Philox}}{{template "philox" .}}{{end}}

fn ew_value(i: u32{{range .Reads}}, {{.Name}}: {{.Type}}{{end}}) -> {{.DstType}} {
    return {{.Value}};
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- if not .Lanes}}
{{- template "flat_index"}}
{{- if .Math}}
    math_zero = params.zero;
{{- end}}
{{- if .Unravel}}
    let at = strided_offsets(i);
{{- end}}
{{- range .Reads}}
    let {{.Name}} = {{.Load}}({{.Array}}[{{if .Strided}}at[{{.Slot}}]{{else}}{{.At}}i{{end}}]);
{{- end}}
    dst[{{if .DstStrided}}at[0]{{else}}{{$.DstAt}}i{{end}}] = ew_value(i{{range .Reads}}, {{.Name}}{{end}});
{{- else if and .Vec4 (gt (len .Chunks) 1)}}
    let t = id.y * params.row_stride + id.x;
    // Chunk c of the invocation is vec4 q0 + c·workgroup size: each load
    // of a subgroup reads consecutive vec4s. Every chunk's loads are
    // issued before any arithmetic.
    let q0 = t / {{.WorkgroupSize}}u * {{mul .WorkgroupSize (len .Chunks)}}u + t % {{.WorkgroupSize}}u;
    if (q0 > (params.n - 1u) / 4u) {
        return;
    }
{{- if .Math}}
    math_zero = params.zero;
{{- end}}
    if (q0 + {{mul .WorkgroupSize (add (len .Chunks) -1)}}u < params.n / 4u) {
{{- range $c := .Chunks}}{{if $c}}
        let q{{$c}} = q0 + {{mul $c $.WorkgroupSize}}u;{{end}}
{{- range $.Reads}}
        let {{.Name}}{{$c}} = {{.Array}}[{{.At}}q{{$c}}];
{{- end}}
{{- end}}
{{- range $c := .Chunks}}
        dst[{{$.DstAt}}q{{$c}}] = vec4<{{$.DstType}}>(
{{- range $l := $.Idx}}{{if lt $l 4}}{{if $l}}, {{end}}ew_value(q{{$c}} * 4u + {{$l}}u{{range $.Reads}}, {{.Load}}({{.Name}}{{$c}}[{{$l}}]){{end}}){{end}}{{end}});
{{- end}}
        return;
    }
{{- if .Whole}}
    // The last workgroup: whole vec4s, up to n (never the last chunk's,
    // or the branch above would have stored it).
{{- range $c := .Chunks}}{{if lt (add $c 1) (len $.Chunks)}}
    if ({{if $c}}q0 + {{mul $c $.WorkgroupSize}}u{{else}}q0{{end}} < params.n / 4u) {
        let q = {{if $c}}q0 + {{mul $c $.WorkgroupSize}}u{{else}}q0{{end}};
{{- range $.Reads}}
        let {{.Name}} = {{.Array}}[{{.At}}q];
{{- end}}
        dst[{{$.DstAt}}q] = vec4<{{$.DstType}}>(
{{- range $l := $.Idx}}{{if lt $l 4}}{{if $l}}, {{end}}ew_value(q * 4u + {{$l}}u{{range $.Reads}}, {{.Load}}({{.Name}}[{{$l}}]){{end}}){{end}}{{end}});
    }
{{- end}}{{end}}
{{- else}}
    // The last workgroup: single components, up to n.
{{- range $c := .Chunks}}{{range $l := $.Idx}}{{if lt $l 4}}
    if ({{if $c}}(q0 + {{mul $c $.WorkgroupSize}}u){{else}}q0{{end}} * 4u + {{$l}}u < params.n) {
        let e = {{if $c}}(q0 + {{mul $c $.WorkgroupSize}}u){{else}}q0{{end}} * 4u + {{$l}}u;
        dst[{{$.DstAt}}e / 4u][e % 4u] = ew_value(e{{range $.Reads}}, {{.Load}}({{.Array}}[{{.At}}e / 4u][e % 4u]){{end}});
    }
{{- end}}{{end}}{{end}}
{{- end}}
{{- else if .Vec4}}
    let t = id.y * params.row_stride + id.x;
    if (t > (params.n - 1u) / {{.Lanes}}u) {
        return;
    }
{{- if .Math}}
    math_zero = params.zero;
{{- end}}
    let base = t * {{.Lanes}}u;
{{- if .Whole}}
    {
{{- else}}
    if (base + {{.Lanes}}u <= params.n) {
{{- end}}
{{- range $c := .Chunks}}
        let q{{$c}} = t * {{len $.Chunks}}u + {{$c}}u;
{{- range $.Reads}}
        let {{.Name}}{{$c}} = {{.Array}}[{{.At}}q{{$c}}];
{{- end}}
        dst[{{$.DstAt}}q{{$c}}] = vec4<{{$.DstType}}>(
{{- range $l := $.Idx}}{{if lt $l 4}}{{if $l}}, {{end}}ew_value(base + {{$c}}u * 4u + {{$l}}u{{range $.Reads}}, {{.Load}}({{.Name}}{{$c}}[{{$l}}]){{end}}){{end}}{{end}});
{{- end}}
{{- if not .Whole}}
        return;
{{- end}}
    }
{{- if not .Whole}}
    // The last invocation: single components, up to n.
{{- range $l := .Idx}}
    if (base + {{$l}}u < params.n) {
        let e = base + {{$l}}u;
        dst[{{$.DstAt}}e / 4u][e % 4u] = ew_value(e{{range $.Reads}}, {{.Load}}({{.Array}}[{{.At}}e / 4u][e % 4u]){{end}});
    }
{{- end}}
{{- end}}
{{- else}}
    let t = id.y * params.row_stride + id.x;
    // Element k of the invocation is k workgroups' width after its first,
    // so that neighbouring invocations read neighbouring elements.
    let first = t / {{.WorkgroupSize}}u * {{mul .WorkgroupSize .Lanes}}u + t % {{.WorkgroupSize}}u;
    if (first >= params.n) {
        return;
    }
{{- if .Math}}
    math_zero = params.zero;
{{- end}}
{{- range $l := .Idx}}
    if (first + {{mul $l $.WorkgroupSize}}u < params.n) {
        let e = first + {{mul $l $.WorkgroupSize}}u;
        dst[{{$.DstAt}}e] = ew_value(e{{range $.Reads}}, {{.Load}}({{.Array}}[{{.At}}e]){{end}});
    }
{{- end}}
{{- end}}
}
