{{/*
Split-K reduction: dst[i] = alpha·Σ_s part[s·total + i] + beta·dst[i] over
the total = batch·M·N outputs of a matmul whose k range matmul_tiled.wgsl
split into params.splits slices (backend/wgpu/matmul_tiled.go).

Template parameters: .Dst .Enable as in matmul.wgsl, .Tile the workgroup
size; .Epi, .ABind and .PBind the fusion epilogue's layout, where part is
bound in the places of both a and b (the epilogue's inputs follow two
producer inputs). The loop runs splits ≤ 65,535 times.
*/}}
{{- .Enable}}

struct Params {
{{- template "epilogue_params"}}
    total: u32,
    splits: u32,
    dst_offset: u32,
    row_stride: u32,   // invocations per grid row
    alpha: f32,
    beta: f32,
}

{{- template "gemm_dst" .}}
@group(0) @binding({{.ABind}}) var<storage, read> part: array<f32>;
@group(0) @binding({{add .ABind 1}}) var<storage, read> part_again: array<f32>;
@group(0) @binding({{.PBind}}) var<uniform> params: Params;
{{template "gemm_put" .}}

@compute @workgroup_size({{.Tile}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * params.row_stride + gid.x;
    if (i >= params.total) {
        return;
    }
    var s = 0.0;
    for (var p = 0u; p < params.splits; p++) {
        s += part[p * params.total + i];
    }
    put(i, s);
}
