
@group(0) @binding(0) var<storage, read_write> fz_o0: array<i32>;
@group(0) @binding(1) var<storage, read_write> fz_o1: array<i32>;
@group(0) @binding(4) var<storage, read> fz_i0: array<i32>;

// {{template "math"}} (shaders/math.wgsl)


fn epilogue(i: u32, v: f32) {
    // A zero the compiler cannot see (see math.wgsl's opaque): no buffer
    // is empty.
    math_zero = select(0u, 1u, arrayLength(&fz_o0) == 0u);
    var fz_t = i;
    let fz_c1 = fz_t % params.epi[0][0];
    fz_t = fz_t / params.epi[0][0];
    let fz_c0 = fz_t;
    let x0 = fz_i0[params.epi[0][1] + fz_c1 * 1u];
    let r = v;
    var v0: f32;
    {
        let a = r;
        let b = bitcast<f32>(x0);
        v0 = a + b;
    }
    var v1: f32;
    {
        let a = v0;
        v1 = relu_f(a);
    }
    fz_o0[24u + i] = bitcast<i32>(r);
    fz_o1[0u + i] = bitcast<i32>(v1);
}
// words: [6 0]
