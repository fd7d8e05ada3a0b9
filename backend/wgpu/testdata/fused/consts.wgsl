
struct FzParams {
    w: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<storage, read_write> fz_o0: array<i32>;
@group(0) @binding(1) var<storage, read> fz_i0: array<i32>;

@group(0) @binding(2) var<uniform> fz_params: FzParams;
// {{template "math"}} (shaders/math.wgsl)


fn fz_body(i: u32) {
    let x0 = fz_i0[fz_params.w[1][0] + i];
    var v0: f32;
    {
        let a = bitcast<f32>(x0);
        let cf = bitcast<vec4<f32>>(vec4<u32>(fz_params.w[1][1], fz_params.w[1][2], 0u, 0u));
        let cu = vec4<u32>(0u, 0u, 0u, 0u);
        v0 = clamp_f(a, cf.x, cf.y);
    }
    var v1: f32;
    {
        let a = v0;
        let cf = bitcast<vec4<f32>>(vec4<u32>(fz_params.w[1][3], 0u, 0u, 0u));
        let cu = vec4<u32>(0u, 0u, 0u, 0u);
        v1 = a / cf.x;
    }
    fz_o0[fz_params.w[2][0] + i] = bitcast<i32>(v1);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.y * fz_params.w[0][1] + id.x;
    if (i >= fz_params.w[0][0]) {
        return;
    }
    math_zero = fz_params.w[0][2];
    fz_body(i);
}

// words: [24 0 0 0 0 3212836864 1073741824 0 0]
