
struct FzParams {
    w: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<storage, read_write> fz_o0: array<vec4<i32>>;
@group(0) @binding(1) var<storage, read> fz_i0: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> fz_i1: array<vec4<i32>>;

@group(0) @binding(3) var<uniform> fz_params: FzParams;
// {{template "math"}} (shaders/math.wgsl)

struct FzOut {
    s0: i32,
}

fn fz_elem(i: u32, x0: i32, x1: i32) -> FzOut {
    var v0: f32;
    {
        let a = bitcast<f32>(x0);
        let b = bitcast<f32>(x1);
        v0 = a + b;
    }
    return FzOut(bitcast<i32>(v0));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.y * fz_params.w[0][1] + id.x;
    if (t > (fz_params.w[0][0] - 1u) / 4u) {
        return;
    }
    math_zero = fz_params.w[0][2];
    let base = t * 4u;
    {
        let q0 = t * 1u + 0u;
        let x0_0 = fz_i0[0u + q0];
        let x1_0 = fz_i1[fz_params.w[1][1] + q0];
        let r0_0 = fz_elem(base + 0u * 4u + 0u, x0_0[0], x1_0[0]);
        let r0_1 = fz_elem(base + 0u * 4u + 1u, x0_0[1], x1_0[1]);
        let r0_2 = fz_elem(base + 0u * 4u + 2u, x0_0[2], x1_0[2]);
        let r0_3 = fz_elem(base + 0u * 4u + 3u, x0_0[3], x1_0[3]);
        fz_o0[0u + q0] = vec4<i32>(r0_0.s0, r0_1.s0, r0_2.s0, r0_3.s0);
    }
}

// words: [24 0 0 0 0 2 0]
