{{/*
A fused elementwise chain (backend/wgpu/fusion*.go renders it): element i
of every op of the chain in one invocation. The Go side writes the body;
this file holds what is fixed around it.

Standalone, the file is the whole module: the outputs at bindings 0.., the
inputs after them, and the uniform words at .ParamsBinding, read as
fz_params.w[k / 4][k % 4] with k a literal: word 0 is the element count,
1 the invocations per grid row, 2 a zero for math.wgsl (see opaque).

"fused_decls" is the epilogue of a producer (a GEMM or Conv2D, see
fusion.go's epilogue): the same declarations and body as
fn epilogue(i: u32, v: f32), whose words are the producer's
params.epi[k / 4][k % 4] (gemm_common.wgsl's "epilogue_params"), with
those past what it holds as literals.

Template data (type fusedShader):
  .Enable         "enable f16;" or ""
  .WorkgroupSize  invocations per workgroup
  .Math, .F16     include "math" (and "math_f16", whose to_f16 stores
                  float16)
  .Bindings       the storage buffer declarations
  .ParamsBinding  the uniform's binding (standalone)
  .Body           the statements, over i (and v in an epilogue)
*/}}
{{- .Enable}}
struct FzParams {
    w: array<vec4<u32>, 16>,
}

{{.Bindings}}
@group(0) @binding({{.ParamsBinding}}) var<uniform> fz_params: FzParams;
{{if .Math}}{{template "math" .}}{{if .F16}}{{template "math_f16" .}}{{end}}{{end}}

fn fz_body(i: u32) {
{{.Body -}}
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
{{.Bindings}}
{{if .Math}}{{template "math" .}}{{if .F16}}{{template "math_f16" .}}{{end}}{{end}}

fn epilogue(i: u32, v: f32) {
{{- if .Math}}
    // A zero the compiler cannot see (see math.wgsl's opaque): no buffer
    // is empty.
    math_zero = select(0u, 1u, arrayLength(&fz_o0) == 0u);
{{- end}}
{{.Body -}}
}
{{- end}}
