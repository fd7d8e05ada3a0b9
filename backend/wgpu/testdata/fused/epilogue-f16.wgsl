
@group(0) @binding(0) var<storage, read_write> fz_o0: array<f16>;

// {{template "math"}} (shaders/math.wgsl)
// {{template "math_f16"}} (shaders/math.wgsl)


fn epilogue(i: u32, v: f32) {
    // A zero the compiler cannot see (see math.wgsl's opaque): no buffer
    // is empty.
    math_zero = select(0u, 1u, arrayLength(&fz_o0) == 0u);
    let r = to_f16(v);
    var v0: f16;
    {
        let a = f32(r);
        v0 = to_f16(a * normal_cdf(a));
    }
    fz_o0[params.epi[0][0] + i] = v0;
}
// words: [0]
