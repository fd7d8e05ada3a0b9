{{/*
Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
easy as 1, 2, 3", SC11) and the hal.Distribution recipes, for the
elementwise kernel (elementwise.wgsl). Include with {{template "philox" .}}.

WGSL has no 64-bit integers, so the 32×32→64-bit products are formed from
16-bit halves (mul_hi); the low half is the wrapping u32 product.

Element i draws block philox(counter = offset + i as the low 64 bits,
key = seed); params.u holds (seed low, seed high, offset low, offset high).
The functions read params.u, so the including kernel must declare it.
*/}}
{{- define "philox"}}
// mul_hi is the high 32 bits of the 64-bit product a·b.
fn mul_hi(a: u32, b: u32) -> u32 {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let ll = al * bl;
    let lh = al * bh;
    let hl = ah * bl;
    // The middle column: carries out of the low 32 bits.
    let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
    return ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
}

fn philox(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = counter;
    var k = key;
    for (var round = 0u; round < 10u; round++) {
        if (round > 0u) {
            k += vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
        }
        let hi0 = mul_hi(0xD2511F53u, c.x);
        let lo0 = 0xD2511F53u * c.x;
        let hi1 = mul_hi(0xCD9E8D57u, c.z);
        let lo1 = 0xCD9E8D57u * c.z;
        c = vec4<u32>(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

// philox_at is element i's block: the counter offset + i carries into its
// second word.
fn philox_at(i: u32) -> vec4<u32> {
    let lo = params.u.z + i;
    let hi = params.u.w + select(0u, 1u, lo < i);
    return philox(vec4<u32>(lo, hi, 0u, 0u), params.u.xy);
}

// unit24 maps the top 24 bits of w to [0, 1) exactly.
fn unit24(w: u32) -> f32 {
    return f32(w >> 8u) * 5.9604644775390625e-08;
}

fn random_uniform(i: u32) -> f32 {
    return unit24(philox_at(i).x);
}

// random_normal is the Box–Muller transform of the block's first two
// words; u₁ is in (0, 1], so ln u₁ is finite.
fn random_normal(i: u32) -> f32 {
    let w = philox_at(i);
    let u1 = f32((w.x >> 8u) + 1u) * 5.9604644775390625e-08;
    let u2 = unit24(w.y);
    return sqrt(-2.0 * log_f(u1)) * cos_f(6.28318548 * u2);
}

// random_bernoulli is 1 where the top 24 bits of w₀ are below threshold,
// round(p·2²⁴) clamped to [0, 2²⁴]: integers that float32 holds exactly,
// so the comparison is exact.
fn random_bernoulli(i: u32, threshold: f32) -> f32 {
    return select(0.0, 1.0, f32(philox_at(i).x >> 8u) < threshold);
}
{{- end}}
