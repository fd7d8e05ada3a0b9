
struct FzParams {
    w: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<storage, read_write> fz_o0: array<i32>;
@group(0) @binding(1) var<storage, read> fz_i0: array<i32>;
@group(0) @binding(2) var<storage, read> fz_i1: array<i32>;

@group(0) @binding(3) var<uniform> fz_params: FzParams;
// {{template "math"}} (shaders/math.wgsl)


fn fz_body(i: u32) {
    let x0 = fz_i0[fz_params.w[1][0] + i];
    let x1 = fz_i1[fz_params.w[1][1] + i];
    var v0: f32;
    {
        let a = bitcast<f32>(x0);
        let b = bitcast<f32>(x1);
        v0 = a + b;
    }
    var v1: f32;
    {
        let a = v0;
        let b = bitcast<f32>(x1);
        v1 = a * b;
    }
    var v2: f32;
    {
        let a = v1;
        v2 = relu_f(a);
    }
    var v3: f32;
    {
        let a = v2;
        let b = bitcast<f32>(x0);
        v3 = a / b;
    }
    fz_o0[fz_params.w[1][2] + i] = bitcast<i32>(v3);
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

// words: [24 0 0 0 0 8 0]
