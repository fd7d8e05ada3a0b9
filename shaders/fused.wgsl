{{/*
A fused elementwise chain (backend/wgpu/fusion*.go plans it): element i
of every op of the chain in one invocation. This file holds what is fixed
around the chain; fused_body.wgsl writes the chain's statements.

Standalone, the file is the whole module: the outputs at bindings 0.., the
inputs after them, and the uniform words at .ParamsBinding, read as
fz_params.w[k / 4][k % 4] with k a literal: word 0 is the element count,
1 the invocations per grid row, 2 a zero for math.wgsl (see opaque).

"fused_decls" is the epilogue of a producer (a GEMM or Conv2D, see
fusion.go's epilogue): the same declarations and body as
fn epilogue(i: u32, v: f32), whose words are the producer's
params.epi[k / 4][k % 4] (gemm_common.wgsl's "epilogue_params"), with
those past what it holds as literals.

Standalone, a chain with no strided load takes the contiguous path
(.Lanes > 0): fz_elem(i, x0, ..) computes element i from its loads and
returns the values to store, and one invocation computes .Lanes elements.
With .Vec4 (every offset a multiple of 4, and its word in vec4 units) the
buffers are arrays of vec4, each of .Chunks is one vec4 load per input and
one vec4 store per output, and the last invocation, past a multiple of 4,
falls back to single components (with several .Chunks, .Lanes 8 under
WEBTENSOR_EW_LANES=8: an invocation's chunks are a workgroup size apart
in vec4s, every load is issued before the arithmetic, and the last
workgroup falls back to single components). With .Whole (n a multiple of
4) there is no single-component fallback, only whole vec4s (see
elementwise.wgsl: a partial store, even one never taken, slows software
adapters). Without .Vec4, the .Lanes elements of an invocation are a
workgroup-size apart (coalesced scalar loads). One
element per invocation leaves a GPU bound by the rate of invocations, not
by memory bandwidth. No loop: llvmpipe stops loops after 65,535
iterations.

WGSL fast-math: an implementation may assume no NaN or infinity, so it
may fold x / x to 1 or x − x to 0 when it can prove both operands are one
value. The planner (fusion.go, add) gives two operands of one op that are
the same view two loads, each with its own offset word, and an operand
that repeats a register goes through opaque (math.wgsl), so that no
compiler can prove them equal.

Template data (type fusedPlan):
  .Enable         "enable f16;" or ""
  .WorkgroupSize  invocations per workgroup
  .Math, .F16     include "math" (and "math_f16", whose to_f16 stores
                  float16)
  .Outputs        the read-write storage buffers: .Binding, .Name, .Type
  .Inputs         the read-only ones
  .ParamsBinding  the uniform's binding (standalone)
  .Lanes, .Vec4,  the contiguous path: elements per invocation, vec4
  .Whole,         buffers, n a multiple of 4 (with .Vec4), the vec4 chunks
  .Chunks, .Idx   and the lanes to unroll
  the rest        the statements, over i (and v in an epilogue): see
                  fused_body.wgsl (and .Loads[k].Type, .Stores[k].Type:
                  the element types, for fz_elem)
*/}}
{{- .Enable}}
struct FzParams {
    w: array<vec4<u32>, 16>,
}

{{template "fused_bindings" .}}
@group(0) @binding({{.ParamsBinding}}) var<uniform> fz_params: FzParams;
{{if .Math}}{{template "math" .}}{{if .F16}}{{template "math_f16" .}}{{end}}{{end}}

{{- if not .Lanes}}
fn fz_body(i: u32) {
{{template "fused_body.wgsl" . -}}
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.y * fz_params.w[0][1] + id.x;
    if (i >= fz_params.w[0][0]) {
        return;
    }
{{- if .Math}}
    math_zero = fz_params.w[0][2];
{{- end}}
    fz_body(i);
}
{{- else}}
struct FzOut {
{{- range $s, $st := .Stores}}
    s{{$s}}: {{.Type}},
{{- end}}
}

fn fz_elem(i: u32{{range $k, $l := .Loads}}, x{{$k}}: {{.Type}}{{end}}) -> FzOut {
{{template "fused_ops" .}}    return FzOut({{range $s, $st := .Stores}}{{if $s}}, {{end}}{{.Value}}{{end}});
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.y * fz_params.w[0][1] + id.x;
{{- if and .Vec4 (gt (len .Chunks) 1)}}
    // Chunk c of the invocation is vec4 q0 + c·workgroup size: each load
    // of a subgroup reads consecutive vec4s. Every chunk's loads are
    // issued before any arithmetic.
    let q0 = t / {{.WorkgroupSize}}u * {{mul .WorkgroupSize (len .Chunks)}}u + t % {{.WorkgroupSize}}u;
    if (q0 > (fz_params.w[0][0] - 1u) / 4u) {
        return;
    }
{{- if .Math}}
    math_zero = fz_params.w[0][2];
{{- end}}
    if (q0 + {{mul .WorkgroupSize (add (len .Chunks) -1)}}u < fz_params.w[0][0] / 4u) {
{{- range $c := .Chunks}}{{if $c}}
        let q{{$c}} = q0 + {{mul $c $.WorkgroupSize}}u;{{end}}
{{- range $k, $l := $.Loads}}
        let x{{$k}}_{{$c}} = {{.Array}}[{{index $.W .Offset}} + q{{$c}}];
{{- end}}
{{- end}}
{{- range $c := .Chunks}}
{{- range $l := $.Idx}}{{if lt $l 4}}
        let r{{$c}}_{{$l}} = fz_elem(q{{$c}} * 4u + {{$l}}u{{range $k, $x := $.Loads}}, x{{$k}}_{{$c}}[{{$l}}]{{end}});
{{- end}}{{end}}
{{- range $s, $st := $.Stores}}
        {{.Array}}[{{index $.W .Offset}} + q{{$c}}] = vec4<{{.Type}}>(r{{$c}}_0.s{{$s}}, r{{$c}}_1.s{{$s}}, r{{$c}}_2.s{{$s}}, r{{$c}}_3.s{{$s}});
{{- end}}
{{- end}}
        return;
    }
{{- if .Whole}}
    // The last workgroup: whole vec4s, up to n (never the last chunk's,
    // or the branch above would have stored it).
{{- range $c := .Chunks}}{{if lt (add $c 1) (len $.Chunks)}}
    if ({{if $c}}q0 + {{mul $c $.WorkgroupSize}}u{{else}}q0{{end}} < fz_params.w[0][0] / 4u) {
        let q = {{if $c}}q0 + {{mul $c $.WorkgroupSize}}u{{else}}q0{{end}};
{{- range $k, $l := $.Loads}}
        let x{{$k}} = {{.Array}}[{{index $.W .Offset}} + q];
{{- end}}
{{- range $l := $.Idx}}{{if lt $l 4}}
        let r{{$l}} = fz_elem(q * 4u + {{$l}}u{{range $k, $x := $.Loads}}, x{{$k}}[{{$l}}]{{end}});
{{- end}}{{end}}
{{- range $s, $st := $.Stores}}
        {{.Array}}[{{index $.W .Offset}} + q] = vec4<{{.Type}}>(r0.s{{$s}}, r1.s{{$s}}, r2.s{{$s}}, r3.s{{$s}});
{{- end}}
    }
{{- end}}{{end}}
{{- else}}
    // The last workgroup: single components, up to n.
{{- range $c := .Chunks}}{{range $l := $.Idx}}{{if lt $l 4}}
    if ({{if $c}}(q0 + {{mul $c $.WorkgroupSize}}u){{else}}q0{{end}} * 4u + {{$l}}u < fz_params.w[0][0]) {
        let e = {{if $c}}(q0 + {{mul $c $.WorkgroupSize}}u){{else}}q0{{end}} * 4u + {{$l}}u;
        let r = fz_elem(e{{range $.Loads}}, {{.Array}}[{{index $.W .Offset}} + e / 4u][e % 4u]{{end}});
{{- range $s, $st := $.Stores}}
        {{.Array}}[{{index $.W .Offset}} + e / 4u][e % 4u] = r.s{{$s}};
{{- end}}
    }
{{- end}}{{end}}{{end}}
{{- end}}
{{- else if .Vec4}}
    if (t > (fz_params.w[0][0] - 1u) / {{.Lanes}}u) {
        return;
    }
{{- if .Math}}
    math_zero = fz_params.w[0][2];
{{- end}}
    let base = t * {{.Lanes}}u;
{{- if .Whole}}
    {
{{- else}}
    if (base + {{.Lanes}}u <= fz_params.w[0][0]) {
{{- end}}
{{- range $c := .Chunks}}
        let q{{$c}} = t * {{len $.Chunks}}u + {{$c}}u;
{{- range $k, $l := $.Loads}}
        let x{{$k}}_{{$c}} = {{.Array}}[{{index $.W .Offset}} + q{{$c}}];
{{- end}}
{{- range $l := $.Idx}}{{if lt $l 4}}
        let r{{$c}}_{{$l}} = fz_elem(base + {{$c}}u * 4u + {{$l}}u{{range $k, $x := $.Loads}}, x{{$k}}_{{$c}}[{{$l}}]{{end}});
{{- end}}{{end}}
{{- range $s, $st := $.Stores}}
        {{.Array}}[{{index $.W .Offset}} + q{{$c}}] = vec4<{{.Type}}>(r{{$c}}_0.s{{$s}}, r{{$c}}_1.s{{$s}}, r{{$c}}_2.s{{$s}}, r{{$c}}_3.s{{$s}});
{{- end}}
{{- end}}
{{- if not .Whole}}
        return;
{{- end}}
    }
{{- if not .Whole}}
    // The last invocation: single components, up to n.
{{- range $l := .Idx}}
    if (base + {{$l}}u < fz_params.w[0][0]) {
        let e = base + {{$l}}u;
        let r = fz_elem(e{{range $.Loads}}, {{.Array}}[{{index $.W .Offset}} + e / 4u][e % 4u]{{end}});
{{- range $s, $st := $.Stores}}
        {{.Array}}[{{index $.W .Offset}} + e / 4u][e % 4u] = r.s{{$s}};
{{- end}}
    }
{{- end}}
{{- end}}
{{- else}}
    // Element k of the invocation is k workgroups' width after its first,
    // so that neighbouring invocations read neighbouring elements.
    let first = t / {{.WorkgroupSize}}u * {{mul .WorkgroupSize .Lanes}}u + t % {{.WorkgroupSize}}u;
    if (first >= fz_params.w[0][0]) {
        return;
    }
{{- if .Math}}
    math_zero = fz_params.w[0][2];
{{- end}}
{{- range $l := .Idx}}
    if (first + {{mul $l $.WorkgroupSize}}u < fz_params.w[0][0]) {
        let e = first + {{mul $l $.WorkgroupSize}}u;
        let r = fz_elem(e{{range $.Loads}}, {{.Array}}[{{index $.W .Offset}} + e]{{end}});
{{- range $s, $st := $.Stores}}
        {{.Array}}[{{index $.W .Offset}} + e] = r.s{{$s}};
{{- end}}
    }
{{- end}}
{{- end}}
}
{{- end}}

{{- define "fused_decls"}}
{{template "fused_bindings" .}}
{{if .Math}}{{template "math" .}}{{if .F16}}{{template "math_f16" .}}{{end}}{{end}}

fn epilogue(i: u32, v: f32) {
{{- if .Math}}
    // A zero the compiler cannot see (see math.wgsl's opaque): no buffer
    // is empty.
    math_zero = select(0u, 1u, arrayLength(&fz_o0) == 0u);
{{- end}}
{{template "fused_body.wgsl" . -}}
}
{{- end}}


{{- define "fused_bindings"}}
{{- range .Outputs}}@group(0) @binding({{.Binding}}) var<storage, read_write> {{.Name}}: array<{{.Type}}>;
{{end}}
{{- range .Inputs}}@group(0) @binding({{.Binding}}) var<storage, read> {{.Name}}: array<{{.Type}}>;
{{end}}
{{- end}}
