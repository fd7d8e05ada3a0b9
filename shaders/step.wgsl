// The fused optimizer updates (hal.Optimizer): one invocation per element
// updates the param, its state and nothing else, with PyTorch 1.13's
// single-tensor formulas, term by term in the order torch.optim applies
// its tensor ops, so that each result rounds as PyTorch's float32 ops do
// (add with alpha and addcmul are fma(), as ATen's AVX2 CPU kernels fuse
// them; addcdiv and mul_ round each operation). WGSL's fma() need not be
// fused, and on llvmpipe it is not: there results differ from PyTorch's
// in an ulp of the terms, well inside haltest's stepTol.
//
// float16 operands (param, grad, state and scale all of one dtype) are
// widened on load and the update runs in f32, as the CPU backend runs it;
// param and the state round to f16 once, on store. For f32 the
// conversions are identities, which the compiler drops.
//
// Template parameters (backend/wgpu/step.go renders one variant per
// combination; the options are compile-time so the kernel has no branches):
//   .Op            "sgd", "adam", "rmsprop" or "adagrad"
//   .Type          WGSL type of the operands in storage, f32 or f16
//   .Enable        "enable f16;" for f16
//   .States        the state bindings' indices, 0 … (one per state view)
//   .Grad, .Scale  binding numbers of grad and of the scale (when .Scaled)
//   .Uniform       binding number of the parameters
//   .Scaled        the gradient is multiplied by scale[scale_offset]
//   .Decay         weight decay is nonzero
//   .Momentum      momentum is nonzero (SGD, RMSProp)
//   .FirstStep     SGD: the momentum buffer starts as the gradient
//   .Nesterov      SGD
//   .Decoupled     Adam: AdamW's weight decay
//   .Centered      RMSProp; .Mean is the state (x, y, z) of the mean
//   .WorkgroupSize invocations per workgroup
//
// Bindings: param and every state read-write, then grad and scale
// read-only, then the uniform: at most 1 + 3 + 2 storage buffers.
{{.Enable}}

struct Params {
    n: u32,             // elements
    row_stride: u32,    // invocations per row of the 2-D dispatch grid
    param_offset: u32,
    grad_offset: u32,
    state_offset: vec4<u32>, // x, y, z: the state views' offsets
    scale_offset: u32,
    neg_lr: f32,        // −lr
    weight_decay: f32,
    momentum: f32,
    keep: f32,          // SGD: 1 − dampening
    beta1: f32,
    one_minus_beta1: f32,
    beta2: f32,
    one_minus_beta2: f32,
    shrink: f32,        // AdamW: 1 − lr·weight_decay
    neg_step: f32,      // Adam: −lr / bias_correction1
    bc2_sqrt: f32,      // Adam: √bias_correction2
    eps: f32,
    alpha: f32,         // RMSProp
    one_minus_alpha: f32,
}

@group(0) @binding(0) var<storage, read_write> param: array<{{.Type}}>;
{{- range .States}}
@group(0) @binding({{add . 1}}) var<storage, read_write> state{{.}}: array<{{$.Type}}>;
{{- end}}
@group(0) @binding({{.Grad}}) var<storage, read> grad: array<{{.Type}}>;
{{- if .Scaled}}
@group(0) @binding({{.Scale}}) var<storage, read> scale: array<{{.Type}}>;
{{- end}}
@group(0) @binding({{.Uniform}}) var<uniform> params: Params;

@compute @workgroup_size({{.WorkgroupSize}})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
{{- template "flat_index"}}
    let pi = params.param_offset + i;
    var p = f32(param[pi]);
    var g = f32(grad[params.grad_offset + i]);
{{- if .Scaled}}
    g = g * f32(scale[params.scale_offset]);
{{- end}}
{{- if and .Decay (not .Decoupled)}}
    g = fma(p, params.weight_decay, g);
{{- end}}
{{- if eq .Op "sgd"}}
{{- if .Momentum}}
    let bi = params.state_offset.x + i;
{{- if .FirstStep}}
    let b = g;
{{- else}}
    let b = fma(g, params.keep, f32(state0[bi]) * params.momentum);
{{- end}}
    state0[bi] = {{$.Type}}(b);
{{- if .Nesterov}}
    g = fma(b, params.momentum, g);
{{- else}}
    g = b;
{{- end}}
{{- end}}
    p = fma(g, params.neg_lr, p);
{{- else if eq .Op "adam"}}
{{- if and .Decay .Decoupled}}
    p = p * params.shrink;
{{- end}}
    let mi = params.state_offset.x + i;
    let vi = params.state_offset.y + i;
    let m = fma(g, params.one_minus_beta1, f32(state0[mi]) * params.beta1);
    let v = fma(params.one_minus_beta2 * g, g, f32(state1[vi]) * params.beta2);
    state0[mi] = {{$.Type}}(m);
    state1[vi] = {{$.Type}}(v);
    let denom = sqrt(v) / params.bc2_sqrt + params.eps;
    p = p + (params.neg_step * m) / denom;
{{- else if eq .Op "rmsprop"}}
    let vi = params.state_offset.x + i;
    let v = fma(params.one_minus_alpha * g, g, f32(state0[vi]) * params.alpha);
    state0[vi] = {{$.Type}}(v);
{{- if .Centered}}
    let ai = params.state_offset.{{.Mean}} + i;
    let a = fma(g, params.one_minus_alpha, f32(state{{.MeanState}}[ai]) * params.alpha);
    state{{.MeanState}}[ai] = {{$.Type}}(a);
    let avg = sqrt(fma(-a, a, v)) + params.eps;
{{- else}}
    let avg = sqrt(v) + params.eps;
{{- end}}
{{- if .Momentum}}
    let bi = params.state_offset.y + i;
    let b = f32(state1[bi]) * params.momentum + g / avg;
    state1[bi] = {{$.Type}}(b);
    p = fma(b, params.neg_lr, p);
{{- else}}
    p = p + (params.neg_lr * g) / avg;
{{- end}}
{{- else if eq .Op "adagrad"}}
    let si = params.state_offset.x + i;
    let s = fma(g, g, f32(state0[si]));
    state0[si] = {{$.Type}}(s);
    p = p + (params.neg_lr * g) / (sqrt(s) + params.eps);
{{- end}}
    param[pi] = {{.Type}}(p);
}
