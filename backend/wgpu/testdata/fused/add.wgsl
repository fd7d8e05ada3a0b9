
struct FzParams {
    w: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<storage, read_write> fz_o0: array<i32>;
@group(0) @binding(1) var<storage, read> fz_i0: array<i32>;
@group(0) @binding(2) var<storage, read> fz_i1: array<i32>;

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
    // Element k of the invocation is k workgroups' width after its first,
    // so that neighbouring invocations read neighbouring elements.
    let first = t / 64u * 256u + t % 64u;
    if (first >= fz_params.w[0][0]) {
        return;
    }
    math_zero = fz_params.w[0][2];
    if (first + 0u < fz_params.w[0][0]) {
        let e = first + 0u;
        let r = fz_elem(e, fz_i0[0u + e], fz_i1[fz_params.w[1][1] + e]);
        fz_o0[0u + e] = r.s0;
    }
    if (first + 64u < fz_params.w[0][0]) {
        let e = first + 64u;
        let r = fz_elem(e, fz_i0[0u + e], fz_i1[fz_params.w[1][1] + e]);
        fz_o0[0u + e] = r.s0;
    }
    if (first + 128u < fz_params.w[0][0]) {
        let e = first + 128u;
        let r = fz_elem(e, fz_i0[0u + e], fz_i1[fz_params.w[1][1] + e]);
        fz_o0[0u + e] = r.s0;
    }
    if (first + 192u < fz_params.w[0][0]) {
        let e = first + 192u;
        let r = fz_elem(e, fz_i0[0u + e], fz_i1[fz_params.w[1][1] + e]);
        fz_o0[0u + e] = r.s0;
    }
}

// words: [24 0 0 0 0 8 0]
