{{/*
The statements of a fused chain (backend/wgpu/fusion_render.go plans
them), the body of fused.wgsl's fz_body(i) and of an epilogue(i, v): load
the group's external inputs, compute each op in order into a register,
store each output still live.

Template data (type fusedPlan), words named by their index k into .W (the
WGSL of word k: a uniform word, or a literal an epilogue spilled):
  .Unravel  unravel i into fz_c0.. over .Axes (.Coord, .Extent a word), the
            collapsed shape's axes but the first, last first
  .Loads    let x<k> = .Array[.Offset + i], or for a .Strided load
            .Array[.Offset + fz_c<.Coord> * .Stride ...] over .Terms
  .Result   an epilogue's r: the producer's v as the producer stores it
  .Ops      var v<k>: .Type, over .Args (let .Name = .Expr), with .Consts
            the constants cf and cu, lane c the word .F[c] / .U[c] (-1:
            a lane the op does not read, the literal 0u), then = .Value
  .Stores   .Array[.Offset + i] = .Value
Each statement is a line of its own, indented four spaces. "fused_ops"
is .Ops alone, which fused.wgsl's contiguous path calls per element.
*/}}
{{- if .Unravel}}    var fz_t = i;
{{range .Axes}}    let fz_c{{.Coord}} = fz_t % {{index $.W .Extent}};
    fz_t = fz_t / {{index $.W .Extent}};
{{end}}    let fz_c0 = fz_t;
{{end}}
{{- range $k, $l := .Loads}}    let x{{$k}} = {{.Array}}[{{index $.W .Offset}}{{if .Strided}}{{range .Terms}} + fz_c{{.Coord}} * {{index $.W .Stride}}{{end}}{{else}} + i{{end}}];
{{end}}
{{- with .Result}}    let r = {{.}};
{{end}}
{{- template "fused_ops" .}}
{{- range .Stores}}    {{.Array}}[{{index $.W .Offset}} + i] = {{.Value}};
{{end -}}

{{- define "fused_ops"}}
{{- range $k, $op := .Ops}}    var v{{$k}}: {{.Type}};
    {
{{range .Args}}        let {{.Name}} = {{.Expr}};
{{end}}
{{- if .Consts}}        let cf = bitcast<vec4<f32>>(vec4<u32>({{range $c, $w := .F}}{{if $c}}, {{end}}{{if lt $w 0}}0u{{else}}{{index $.W $w}}{{end}}{{end}}));
        let cu = vec4<u32>({{range $c, $w := .U}}{{if $c}}, {{end}}{{if lt $w 0}}0u{{else}}{{index $.W $w}}{{end}}{{end}});
{{end}}        v{{$k}} = {{.Value}};
    }
{{end}}
{{- end -}}
