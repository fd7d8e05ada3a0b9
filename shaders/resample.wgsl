{{/*
A sparse matrix applied along one axis (hal.Device.Resample): element i of
dst, at position j along the axis, is Σₑ weight[e]·src[…, index[e], …] over
the CSR row j of the taps, products and sums in f32 in the row's order.

Template parameters (backend/wgpu/resample.go renders them):
  .T        WGSL type of dst and src (f32 or f16; f16 computes in f32)
  .Enable   "enable f16;" for f16
  .Strided  src is not contiguous: its element offset comes from unravelling
            i over dst's shape and dotting it with src's strides (the axis's
            stride zeroed); otherwise from i's outer and inner parts alone.
  .WorkgroupSize

The taps buffer holds the CSR offsets (rows + 1 words), then the indices,
then the weights as f32 bits. A row's loop is bounded by
hal.MaxResampleRow (32,768) iterations, under llvmpipe's 65,535.
*/}}
{{- .Enable}}

struct Params {
    n: u32,            // elements of dst
    row_stride: u32,   // invocations per row of the 2-D dispatch grid
    rows: u32,         // dst's size along the axis (taps rows)
    inner: u32,        // elements of dst after the axis
    in_axis: u32,      // src's size along the axis
    axis_stride: u32,  // src's stride along the axis
    src_offset: u32,
    dst_offset: u32,
    index_start: u32,  // first index word in taps
    weight_start: u32, // first weight word in taps
    rank: u32,
    zero: u32,
    shape: array<vec4<u32>, 2>,   // dst's shape
    strides: array<vec4<u32>, 2>, // src's strides, 0 along the axis
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{.T}}>;
@group(0) @binding(1) var<storage, read> src: array<{{.T}}>;
@group(0) @binding(2) var<storage, read> taps: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

{{template "narrow" .}}
{{- if .Strided}}
{{template "strided" .}}
{{- end}}

fn tap(base: u32, e: u32) -> f32 {
    let w = bitcast<f32>(taps[params.weight_start + e]);
    return w * f32(src[base + taps[params.index_start + e] * params.axis_stride]);
}

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- template "flat_index"}}
    let j = (i / params.inner) % params.rows;
{{- if .Strided}}
    let base = strided_offset(i, params.shape, params.strides, params.rank, params.src_offset);
{{- else}}
    let outer = i / (params.inner * params.rows);
    let base = params.src_offset + outer * params.in_axis * params.inner + i % params.inner;
{{- end}}
    let first = taps[j];
    let last = taps[j + 1u];
    var acc = 0.0;
    if (first < last) {
        acc = tap(base, first);
        for (var e = first + 1u; e < last; e++) {
            acc += tap(base, e);
        }
    }
    dst[params.dst_offset + i] = narrow(acc);
}
