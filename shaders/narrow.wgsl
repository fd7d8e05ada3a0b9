{{/*
"narrow" defines narrow(x: f32) -> .T, the store conversion of kernels that
compute in f32 and write f32 or f16 (.T). f16 goes through to_f16
(reduce.wgsl), which rounds values beyond f16's range to ±Inf as IEEE-754
does, where WGSL leaves a plain f16(x) undefined. Include it at module
scope with {{template "narrow" .}}.
*/}}
{{- define "narrow"}}
{{- if eq .T "f16"}}
{{template "to_f16"}}

fn narrow(x: f32) -> f16 {
    return to_f16(x);
}
{{- else}}
fn narrow(x: f32) -> f32 {
    return x;
}
{{- end}}
{{- end}}
