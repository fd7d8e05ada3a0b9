enable f16;
struct FzParams {
    w: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<storage, read_write> fz_o0: array<f16>;
@group(0) @binding(1) var<storage, read> fz_i0: array<f16>;

@group(0) @binding(2) var<uniform> fz_params: FzParams;
// {{template "math"}} (shaders/math.wgsl)
// {{template "math_f16"}} (shaders/math.wgsl)


fn fz_body(i: u32) {
    let x0 = fz_i0[fz_params.w[1][0] + i];
    var v0: f16;
    {
        let a = f32(x0);
        let b = f32(x0);
        v0 = to_f16(a * b);
    }
    var v1: f16;
    {
        let a = f32(v0);
        v1 = to_f16(tanh_f(a));
    }
    fz_o0[fz_params.w[1][1] + i] = v1;
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

// words: [24 0 0 0 0 0]
