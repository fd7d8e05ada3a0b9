
struct FzParams {
    w: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<storage, read_write> fz_o0: array<i32>;
@group(0) @binding(1) var<storage, read> fz_i0: array<i32>;
@group(0) @binding(2) var<storage, read> fz_i1: array<i32>;
@group(0) @binding(3) var<storage, read> fz_i2: array<i32>;

@group(0) @binding(4) var<uniform> fz_params: FzParams;
// {{template "math"}} (shaders/math.wgsl)

fn fz_body(i: u32) {
    var fz_t = i;
    let fz_c1 = fz_t % fz_params.w[1][0];
    fz_t = fz_t / fz_params.w[1][0];
    let fz_c0 = fz_t;
    let x0 = fz_i0[0u + i];
    let x1 = fz_i1[0u + fz_c1 * fz_params.w[1][3]];
    let x2 = fz_i2[0u + fz_c0 * fz_params.w[2][1]];
    var v0: f32;
    {
        let a = bitcast<f32>(x0);
        let b = bitcast<f32>(x1);
        v0 = a - b;
    }
    var v1: f32;
    {
        let a = v0;
        let b = bitcast<f32>(x2);
        v1 = a * b;
    }
    fz_o0[0u + i] = bitcast<i32>(v1);
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

// words: [24 0 0 0 6 0 0 1 0 1 0]
