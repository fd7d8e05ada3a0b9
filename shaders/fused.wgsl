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

Template data (type fusedPlan):
  .Enable         "enable f16;" or ""
  .WorkgroupSize  invocations per workgroup
  .Math, .F16     include "math" (and "math_f16", whose to_f16 stores
                  float16)
  .Outputs        the read-write storage buffers: .Binding, .Name, .Type
  .Inputs         the read-only ones
  .ParamsBinding  the uniform's binding (standalone)
  the rest        the statements, over i (and v in an epilogue): see
                  fused_body.wgsl
*/}}
{{- .Enable}}
struct FzParams {
    w: array<vec4<u32>, 16>,
}

{{template "fused_bindings" .}}
@group(0) @binding({{.ParamsBinding}}) var<uniform> fz_params: FzParams;
{{if .Math}}{{template "math" .}}{{if .F16}}{{template "math_f16" .}}{{end}}{{end}}

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
