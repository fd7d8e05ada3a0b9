
@group(0) @binding(0) var<storage, read_write> fz_o0: array<i32>;
@group(0) @binding(1) var<storage, read_write> fz_o1: array<i32>;
@group(0) @binding(4) var<storage, read> fz_i0: array<i32>;


var<private> math_zero: u32;

fn opaque(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) | math_zero);
}

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn is_inf(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u;
}

fn sign_bit(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x80000000u) != 0u;
}

fn nan_f32() -> f32 {
    return bitcast<f32>(0x7fc00000u | math_zero);
}

fn inf_f32() -> f32 {
    return bitcast<f32>(0x7f800000u | math_zero);
}

// with_sign returns |x| with the sign of s.
fn with_sign(x: f32, s: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}

// scale2 is x·2ⁿ for |n| ≤ 300, in two steps so that each ldexp stays
// inside the exponent range WGSL defines it for.
fn scale2(x: f32, n: i32) -> f32 {
    let h = n / 2;
    return ldexp(ldexp(x, h), n - h);
}

// f32_to_i32 truncates toward zero, saturates, and maps NaN to 0. WGSL's
// i32(x) saturates at 2147483520 (the largest float32 below 2³¹) and
// leaves NaN undefined.
fn f32_to_i32(x: f32) -> i32 {
    if (is_nan(x)) {
        return 0;
    }
    if (x >= 2147483648.0) {
        return 2147483647;
    }
    if (x <= -2147483648.0) {
        return bitcast<i32>(0x80000000u);
    }
    return i32(x);
}

// expm1_poly is eʳ − 1 for |r| ≤ ln2/2 (Taylor to r⁹, truncation < 0.1
// ulp); the leading r is added last so it stays exact.
fn expm1_poly(r: f32) -> f32 {
    let q = 5.000000000e-01 + r * (1.666666716e-01 + r * (4.166666791e-02 + r * (8.333333768e-03 +
        r * (1.388888923e-03 + r * (1.984127011e-04 + r * (2.480158764e-05 + r * 2.755731884e-06))))));
    return r + r * r * q;
}

// reduce_ln2 splits x = n·ln2 + r, |r| ≤ ln2/2 (Cody–Waite: ln2's high
// part has trailing zeros, so n·LN2_HI and x − n·LN2_HI are exact).
fn reduce_ln2(x: f32) -> vec2<f32> {
    let n = round(x * 1.44269502);
    let r = opaque(x - n * 0.693145751953125) - n * 1.42860677e-06;
    return vec2<f32>(n, r);
}

fn exp_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    if (x > 88.7228317) {
        return inf_f32();
    }
    if (x < -103.972076) {
        return 0.0;
    }
    let nr = reduce_ln2(x);
    return scale2(1.0 + expm1_poly(nr.y), i32(nr.x));
}

fn expm1_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    if (abs(x) <= 0.34657359) {
        return expm1_poly(x);
    }
    if (x > 20.0) {
        return exp_f(x); // eˣ − 1 rounds to eˣ
    }
    if (x < -18.0) {
        return -1.0; // eˣ − 1 rounds to −1
    }
    // eˣ − 1 = 2ⁿ·(eʳ − 1) + (2ⁿ − 1): both terms are formed exactly
    // enough that the one rounding of their sum dominates.
    let nr = reduce_ln2(x);
    let n = i32(nr.x);
    return scale2(expm1_poly(nr.y), n) + (scale2(1.0, n) - 1.0);
}

// log1p_reduced is ln(1+f) for f in [√½−1, √2−1]: with s = f/(2+f),
// ln(1+f) = 2·atanh(s) = f − s·(f − R), R = Σ 2s²ᵏ/(2k+1) (k ≥ 1); f
// itself is exact, so the rounding falls on the small correction only.
fn log1p_reduced(f: f32) -> f32 {
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * (0.666666687 + z * (0.400000006 + z * (0.285714298 + z * (0.222222224 + z * 0.181818187))));
    return f - s * (f - r);
}

// log_split returns (e, f) with x = 2ᵉ·(1+f), 1+f in [√½, √2). x is
// positive and finite.
fn log_split(x: f32) -> vec2<f32> {
    let fr = frexp(x);
    var m = fr.fract;
    var e = fr.exp;
    if (m < 0.707106769) {
        m = m * 2.0;
        e = e - 1;
    }
    return vec2<f32>(f32(e), m - 1.0);
}

fn log_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    if (x == 0.0) {
        return -inf_f32();
    }
    if (x < 0.0) {
        return nan_f32();
    }
    if (is_inf(x)) {
        return x;
    }
    let ef = log_split(x);
    // e·LN2_HI is exact (|e| < 2⁹); the small terms go first.
    return ef.x * 0.693145751953125 + (log1p_reduced(ef.y) + ef.x * 1.42860677e-06);
}

fn log1p_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    if (x == -1.0) {
        return -inf_f32();
    }
    if (x < -1.0) {
        return nan_f32();
    }
    if (is_inf(x)) {
        return x;
    }
    if (x >= -0.292893219 && x <= 0.414213538) {
        return log1p_reduced(x);
    }
    // u = 1 + x rounds; c = (x − (u − 1))/u puts the lost part back
    // (ln(u + e) ≈ ln u + e/u). opaque keeps u − 1 from folding to x.
    let u = opaque(1.0 + x);
    let c = (x - (u - 1.0)) / u;
    return log_f(u) + c;
}

// sincos_reduced returns (sin r, cos r) for |r| ≤ π/4 + a little (Taylor
// to r¹¹ and r¹², truncation < 0.05 ulp).
fn sincos_reduced(r: f32) -> vec2<f32> {
    let z = r * r;
    let s = r + r * z * (-1.666666716e-01 + z * (8.333333768e-03 + z * (-1.984127011e-04 + z * (2.755731884e-06 + z * -2.505210790e-08))));
    let c = 1.0 - 0.5 * z + z * z * (4.166666791e-02 + z * (-1.388888923e-03 + z * (2.480158764e-05 + z * (-2.755731998e-07 + z * 2.087675590e-09))));
    return vec2<f32>(s, c);
}

// trig_reduce splits x = k·π/2 + r, |r| ≲ π/4, with π/2 in four parts of
// which the first three have 8 significant bits: k·part is exact for
// |k| < 2¹⁶ (|x| < 10⁵), and each subtraction is exact or nearly so.
// Returns (k mod 4, r).
fn trig_reduce(x: f32) -> vec2<f32> {
    let k = round(x * 0.636619747);
    var r = opaque(x - k * 1.5703125);
    r = opaque(r - k * 0.0004825592041015625);
    r = opaque(r - k * 1.2665987014770508e-06);
    r = r - k * 9.92093518e-10;
    let q = f32(i32(k) & 3);
    return vec2<f32>(q, r);
}

// sin_f and cos_f fall back to the builtins past |x| = 10⁵, where a
// float32 argument's own rounding (ulp ≥ 0.0078) dwarfs the reduction
// error anyway.
fn sin_f(x: f32) -> f32 {
    if (is_nan(x) || is_inf(x)) {
        return nan_f32();
    }
    if (abs(x) > 1e5) {
        return sin(x);
    }
    let qr = trig_reduce(x);
    let sc = sincos_reduced(qr.y);
    let q = i32(qr.x);
    var v = sc.x;
    if (q == 1) {
        v = sc.y;
    } else if (q == 2) {
        v = -sc.x;
    } else if (q == 3) {
        v = -sc.y;
    }
    if (x == 0.0) {
        return x; // keeps the sign of zero
    }
    return v;
}

fn cos_f(x: f32) -> f32 {
    if (is_nan(x) || is_inf(x)) {
        return nan_f32();
    }
    if (abs(x) > 1e5) {
        return cos(x);
    }
    let qr = trig_reduce(x);
    let sc = sincos_reduced(qr.y);
    let q = i32(qr.x);
    var v = sc.y;
    if (q == 1) {
        v = -sc.x;
    } else if (q == 2) {
        v = -sc.y;
    } else if (q == 3) {
        v = sc.x;
    }
    return v;
}

fn tan_f(x: f32) -> f32 {
    if (is_nan(x) || is_inf(x)) {
        return nan_f32();
    }
    if (abs(x) > 1e5) {
        return tan(x);
    }
    let qr = trig_reduce(x);
    let sc = sincos_reduced(qr.y);
    if (x == 0.0) {
        return x;
    }
    if ((i32(qr.x) & 1) == 1) {
        return -sc.y / sc.x;
    }
    return sc.x / sc.y;
}

// tanh_f is e/(e+2) with e = expm1(2|x|): no cancellation near 0, and past
// |x| = 10 the result rounds to ±1.
fn tanh_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    let a = abs(x);
    if (a > 10.0) {
        return with_sign(1.0, x);
    }
    let e = expm1_f(2.0 * a);
    return with_sign(e / (e + 2.0), x);
}

// sigmoid_f evaluates e^−|x| only, which neither overflows nor cancels.
fn sigmoid_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    let e = exp_f(-abs(x));
    let s = 1.0 / (1.0 + e);
    if (x >= 0.0) {
        return s;
    }
    return e * s;
}

// exp_neg_half_sq is e^(−x²/2) without the rounding of x²: x = h + l with
// h holding 12 significant bits, so h² is exact and
// x²/2 = h²/2 + l·(h + l/2) splits the exponent into an exact part and a
// small one.
fn exp_neg_half_sq(x: f32) -> f32 {
    let h = bitcast<f32>(bitcast<u32>(x) & 0xfffff000u);
    let l = x - h;
    return exp_f(-0.5 * h * h) * exp_f(-l * (h + 0.5 * l));
}

// erf_taylor is erf(z) for |z| ≤ 1/2: z·Σ aₙ z²ⁿ with
// aₙ = 2/√π·(−1)ⁿ/(n!(2n+1)), truncated after n = 8 (the next term is
// below 10⁻¹¹ of the result). a₀ is split into its float32 rounding and
// the rest (which alone would cost 0.9 ulp near 0), and z·a₀ is added
// last, so the result is within about an ulp; opaque stops the compiler
// from factoring z back out (Mesa does).
fn erf_taylor(z: f32) -> f32 {
    let w = z * z;
    let q = -3.761263788e-01 + w * (1.128379181e-01 + w * (-2.686617151e-02 +
        w * (5.223977845e-03 + w * (-8.548327023e-04 + w * (1.205533263e-04 + w * (-1.492565025e-05 +
        w * 1.646211444e-06))))));
    return opaque(z * 1.128379226) + z * (-5.863538344e-08 + w * q);
}

// normal_tail is Φ(−a) = erfc(a/√2)/2 for a ≥ 1/√2, relative to its own
// size: erfc(z) = e^(−z²)·F(t)·t with t = 1/z, where F(t) = z·e^(z²)·erfc(z)
// is smooth in t on (0, 2]. F is fitted in erfc_poly (Chebyshev interpolation,
// made for this code) in two pieces, each a polynomial in u ∈ [−1, 1]:
// degree 12 for z in [1, 10.1] (t = 0.5495 + 0.4505u) and degree 8 for z
// in [0.5, 1] (t = 1.5 + 0.5u), both within 1.2e-8 relative. Past
// z = 10.1, erfc underflows float32.
fn normal_tail(a: f32) -> f32 {
    let z = a * 0.707106769;
    if (z > 10.1) {
        return 0.0;
    }
    let t = 1.0 / z;
    return 0.5 * exp_neg_half_sq(a) * erfc_poly(z, t) * t;
}

// erfc_poly is F(t) = z·e^(z²)·erfc(z) for z in [1/2, 10.1], t = 1/z: the
// fit normal_tail describes.
fn erfc_poly(z: f32, t: f32) -> f32 {
    if (z >= 1.0) {
        let u = (t - 0.549504936) * 2.21978021;
        return 5.024375916e-01 + u * (-7.659086585e-02 + u * (-4.162439611e-03 + u * (9.010129608e-03 +
            u * (-4.000843037e-03 + u * (9.239668143e-04 + u * (1.002826684e-04 + u * (-2.281476336e-04 +
            u * (1.452839788e-04 + u * (-7.407581143e-05 + u * (1.429750137e-05 + u * (1.882328797e-05 +
            u * -1.042824442e-05)))))))))));
    }
    let u = (t - 1.5) * 2.0;
    return 3.595229387e-01 + u * (-5.919902399e-02 + u * (8.289240301e-03 + u * (-7.414807915e-04 +
        u * (-7.282439765e-05 + u * (6.388311158e-05 + u * (-2.322201908e-05 + u * (7.417582765e-06 +
        u * -1.757709128e-06)))))));
}

// erf_f is erf x: the Taylor series below |x| = 1/2, and 1 − erfc(|x|)
// above, where erf x ≥ 0.52 so the subtraction loses nothing and the
// rounding of x² in e^(−x²) moves the result by at most 0.3u. Past |x| = 4,
// erfc < 2⁻²⁵ and erf rounds to ±1.
fn erf_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    let z = abs(x);
    if (z < 0.5) {
        return erf_taylor(x);
    }
    if (z > 4.0) {
        return with_sign(1.0, x);
    }
    let t = 1.0 / z;
    return with_sign(1.0 - exp_f(-z * z) * erfc_poly(z, t) * t, x);
}

// normal_cdf is Φ(x) = (1 + erf(x/√2))/2, from erfc away from 0 so that
// Φ(x) for x < 0 keeps its relative accuracy (GELU multiplies it by x).
fn normal_cdf(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    let a = abs(x);
    if (a < 0.707106769) {
        return 0.5 + 0.5 * erf_taylor(x * 0.707106769);
    }
    let tail = normal_tail(a);
    if (x < 0.0) {
        return tail;
    }
    return 1.0 - tail;
}

// odd_integer reports whether y is an odd integer (every float32 of
// magnitude ≥ 2²⁴ is even).
fn odd_integer(y: f32) -> bool {
    let a = abs(y);
    return a < 16777216.0 && floor(a) == a && (u32(a) & 1u) == 1u;
}

// pow_f is C's pow, special cases included. |x|^y is e^(y·ln|x|) with the
// accurate exp and log, whose result carries the exponent's rounding,
// |y·ln x| ulp; small integer exponents and ½ are computed directly.
fn pow_f(x: f32, y: f32) -> f32 {
    if (y == 0.0 || x == 1.0) {
        return 1.0;
    }
    if (is_nan(x) || is_nan(y)) {
        return nan_f32();
    }
    if (y == 1.0) {
        return x;
    }
    let ax = abs(x);
    if (is_inf(y)) {
        if (ax == 1.0) {
            return 1.0;
        }
        if ((ax < 1.0) == (y < 0.0)) {
            return inf_f32();
        }
        return 0.0;
    }
    let integral = floor(y) == y;
    if (x < 0.0 && !is_inf(x) && !integral) {
        return nan_f32();
    }
    var r: f32;
    if (ax == 0.0) {
        r = select(0.0, inf_f32(), y < 0.0);
    } else if (is_inf(ax)) {
        r = select(inf_f32(), 0.0, y < 0.0);
    } else if (y == -1.0) {
        r = 1.0 / ax; // correctly rounded, even where e^(−ln x) goes subnormal
    } else if (integral && abs(y) <= 16.0 && f32(abs(frexp(ax).exp) + 1) * abs(y) < 126.0) {
        // Square and multiply: at most 7 roundings, fewer than the
        // |y·ln x| ulp e^(y·ln x) inherits, and x² is correctly rounded.
        // The exponent test keeps every partial product normal.
        var k = u32(abs(y));
        var base = ax;
        var p = 1.0;
        loop {
            if ((k & 1u) == 1u) {
                p = p * base;
            }
            k = k >> 1u;
            if (k == 0u) {
                break;
            }
            base = base * base;
        }
        r = select(p, 1.0 / p, y < 0.0);
    } else if (y == 0.5) {
        r = sqrt(ax);
    } else {
        r = exp_f(y * log_f(ax));
    }
    if (sign_bit(x) && odd_integer(y)) {
        return -r;
    }
    return r;
}

// The activations and the NaN-propagating selections of hal/ops.go. NaN
// is tested explicitly because WGSL's max, min and comparisons need not
// propagate or honour it.

fn sign_f(x: f32) -> f32 {
    if (is_nan(x) || x == 0.0) {
        return x;
    }
    return select(-1.0, 1.0, x > 0.0);
}

fn sqrt_f(x: f32) -> f32 {
    if (x < 0.0) {
        return nan_f32();
    }
    return sqrt(x);
}

// rsqrt_f gives ±Inf at ±0 and 0 at +Inf, which inverseSqrt leaves
// undefined.
fn rsqrt_f(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    if (x == 0.0) {
        return with_sign(inf_f32(), x);
    }
    if (x < 0.0) {
        return nan_f32();
    }
    if (is_inf(x)) {
        return 0.0;
    }
    return inverseSqrt(x);
}

fn max_f(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b)) {
        return nan_f32();
    }
    return max(a, b);
}

fn min_f(a: f32, b: f32) -> f32 {
    if (is_nan(a) || is_nan(b)) {
        return nan_f32();
    }
    return min(a, b);
}

fn relu_f(x: f32) -> f32 {
    if (is_nan(x) || x > 0.0) {
        return x;
    }
    return 0.0;
}

fn clamp_f(x: f32, lo: f32, hi: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    return min(max(x, lo), hi);
}

fn leaky_relu_f(x: f32, alpha: f32) -> f32 {
    if (is_nan(x) || x >= 0.0) {
        return x;
    }
    return alpha * x;
}

fn elu_f(x: f32, alpha: f32) -> f32 {
    if (is_nan(x) || x > 0.0) {
        return x;
    }
    return alpha * expm1_f(x);
}

// gelu_tanh_f uses x/2·(1 + tanh z) = x·σ(2z), which does not cancel for
// x ≪ 0.
fn gelu_tanh_f(x: f32) -> f32 {
    let z = 0.797884583 * (x + 0.044715 * x * x * x);
    return x * sigmoid_f(2.0 * z);
}

// softplus_f is PyTorch's: x where beta·x > threshold, else
// ln(1 + e^(beta·x))/beta, formed as max(t, 0) + ln(1 + e^−|t|) so that
// it neither overflows nor loses the small values.
fn softplus_f(x: f32, beta: f32, threshold: f32) -> f32 {
    let t = beta * x;
    if (t > threshold) {
        return x;
    }
    return (max(t, 0.0) + log1p_f(exp_f(-abs(t)))) / beta;
}

fn epilogue(i: u32, v: f32) {
    // A zero the compiler cannot see (see math.wgsl's opaque): no buffer
    // is empty.
    math_zero = select(0u, 1u, arrayLength(&fz_o0) == 0u);
    var fz_t = i;
    let fz_c1 = fz_t % params.epi[0][0];
    fz_t = fz_t / params.epi[0][0];
    let fz_c0 = fz_t;
    let x0 = fz_i0[params.epi[0][1] + fz_c0 * params.epi[0][2]];
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
        let cf = bitcast<vec4<f32>>(vec4<u32>(params.epi[0][3], 0u, 0u, 0u));
        let cu = vec4<u32>(0u, 0u, 0u, 0u);
        v1 = leaky_relu_f(a, cf.x);
    }
    var v2: f32;
    {
        let a = v1;
        let cf = bitcast<vec4<f32>>(vec4<u32>(params.epi[1][0], params.epi[1][1], 0u, 0u));
        let cu = vec4<u32>(0u, 0u, 0u, 0u);
        v2 = clamp_f(a, cf.x, cf.y);
    }
    fz_o0[params.epi[1][2] + i] = bitcast<i32>(r);
    fz_o1[params.epi[1][3] + i] = bitcast<i32>(v2);
}
// words: [6 0 1 1040187392 0 1086324736 24 0]
