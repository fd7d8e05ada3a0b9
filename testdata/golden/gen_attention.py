#!/usr/bin/python3
"""Writes testdata/golden/nn/attention.json: PyTorch 1.13's attention and
Transformer layers, forward and backward.

Run with Debian's python3-torch (`/usr/bin/python3 testdata/golden/gen_attention.py`);
no other packages. Deterministic: every draw comes from one seeded generator.

Each case builds one module (nn.MultiheadAttention, TransformerEncoderLayer,
TransformerEncoder, TransformerDecoderLayer or TransformerDecoder) in eval
mode with dropout 0, replaces every state-dict value by random float32
values (so norm weights and biases are not 1 and 0, and every layer of a
stack differs), draws float32 inputs, masks and the random cotangents r
(and rw for attention weights), and runs it in float64 from those float32
values: the output, the attention weights (MultiheadAttention with
need_weights), and the gradients of

    loss = sum(out * r) [+ sum(weights * rw)]

with respect to every input and every parameter. Gradients are enabled, so
PyTorch's fused inference fast paths (which need no grad) are not taken.

File format:

    {"torch": VERSION, "cases": [CASE, ...]}

    CASE = {"name": str, "kind": "mha" | "encoder_layer" | "encoder" |
                                 "decoder_layer" | "decoder",
            "config": {embed, heads, batch_first, ... per kind},
            "keys": [state-dict name, ...],          # PyTorch's state_dict order
            "state": {state-dict name: TENSOR},      # float32 values
            "inputs": {"q"|"k"|"v"|"src"|"tgt"|"memory": TENSOR},  # 2-D: unbatched
            "masks": {mask name: MASK},              # PyTorch's keyword names
            "options": {"need_weights": bool, "average_attn_weights": bool},
            "r": TENSOR, "rw": TENSOR | null,
            "out": TENSOR, "weights": TENSOR | null,  # float64 results
            "grads": {input name | state-dict name: TENSOR}}
    TENSOR = {"shape": [...], "data": [...]}          # row-major; float32 values
                                                  # as shortest decimals, float64
                                                  # results to 12 digits
    MASK   = TENSOR + {"kind": "float" | "bool"}      # bool as 0/1; True = masked

Bool masks never mask a whole row (PyTorch gives NaN there; the Go package
documents a deliberate difference), and float masks are finite.
"""

import json
import os
import struct

import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "attention.json")
SEED = 20261127

# Odd sizes: query length, key length, batch, embedding, heads, feed-forward.
L, S, N, E, H, FF = 5, 7, 2, 12, 3, 20

gen = torch.Generator().manual_seed(SEED)


def randn(*shape, scale=1.0):
    return (torch.randn(*shape, generator=gen) * scale).to(torch.float32)


def f32_short(v):
    """The shortest decimal that rounds (via float64) to the float32 v."""
    for p in range(1, 10):
        s = float("%.*g" % (p, v))
        if struct.unpack("f", struct.pack("f", s))[0] == v:
            return int(s) if s == int(s) and abs(s) < 1e9 else s
    raise AssertionError(v)


def enc(t):
    """float32 values as their shortest decimals (the Go test rounds them
    back to float32); float64 results to 12 digits, far below any
    tolerance."""
    t = t.detach().contiguous()
    vals = t.reshape(-1).tolist()
    if t.dtype == torch.float32:
        data = [f32_short(v) for v in vals]
    else:
        data = [float("%.12g" % v) for v in vals]
    return {"shape": list(t.shape), "data": data}


def bool_mask(*shape):
    """A random True-means-masked mask whose last axis is never all True."""
    m = torch.rand(*shape, generator=gen) < 0.3
    m[..., 0] = False
    return m


def float_mask(*shape):
    """An additive mask: small random biases, some positions -1e4."""
    m = randn(*shape, scale=0.5)
    m[torch.rand(*shape, generator=gen) < 0.2] = -1e4
    m[..., 0] = 0.0
    return m


def enc_mask(m):
    if m.dtype == torch.bool:
        d = enc(m.to(torch.float32))
        d["kind"] = "bool"
    else:
        d = enc(m)
        d["kind"] = "float"
    return d


def seq(b, length, feat, batch_first):
    x = randn(b, length, feat) if batch_first else randn(length, b, feat)
    return x


def randomize(module):
    state = {}
    with torch.no_grad():
        for name, p in module.state_dict(keep_vars=True).items():
            v = randn(*p.shape, scale=0.5)
            p.copy_(v)
            state[name] = v
    return state


def run_case(name, kind, config, module, inputs, call, masks, options):
    """call(module, inputs in float64, masks) → (out, weights or None)."""
    module.eval()
    state = randomize(module)
    keys = list(module.state_dict().keys())
    module.double()
    xs = {k: v.double().requires_grad_(True) for k, v in inputs.items()}
    ms = {k: (v if v.dtype == torch.bool else v.double()) for k, v in masks.items()}
    out, weights = call(module, xs, ms)
    r = randn(*out.shape)
    loss = (out * r.double()).sum()
    rw = None
    if weights is not None:
        rw = randn(*weights.shape)
        loss = loss + (weights * rw.double()).sum()
    named = dict(module.named_parameters())
    grads = torch.autograd.grad(loss, list(xs.values()) + list(named.values()))
    gd = {k: enc(g) for k, g in zip(list(xs.keys()) + list(named.keys()), grads)}
    assert torch.isfinite(out).all()
    return {
        "name": name, "kind": kind, "config": config, "keys": keys,
        "state": {k: enc(v) for k, v in state.items()},
        "inputs": {k: enc(v) for k, v in inputs.items()},
        "masks": {k: enc_mask(v) for k, v in masks.items()},
        "options": options,
        "r": enc(r), "rw": enc(rw) if rw is not None else None,
        "out": enc(out), "weights": enc(weights) if weights is not None else None,
        "grads": gd,
    }


def mha_case(name, batch_first=False, self_attn=False, kdim=None, vdim=None, bias=True,
             add_bias_kv=False, add_zero_attn=False, attn_mask=None, key_padding=False,
             need_weights=True, average=True, unbatched=False):
    mha = nn.MultiheadAttention(E, H, dropout=0.0, bias=bias, add_bias_kv=add_bias_kv,
                                add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim,
                                batch_first=batch_first)
    s = L if self_attn else S
    if self_attn:
        inputs = {"q": seq(N, L, E, batch_first)}
    else:
        inputs = {"q": seq(N, L, E, batch_first), "k": seq(N, S, kdim or E, batch_first),
                  "v": seq(N, S, vdim or E, batch_first)}
    if unbatched:  # one sequence: drop the batch axis
        inputs = {k: v[0] if batch_first else v[:, 0] for k, v in inputs.items()}
    masks = {}
    if attn_mask == "bool2":
        masks["attn_mask"] = bool_mask(L, s)
    elif attn_mask == "float2":
        masks["attn_mask"] = float_mask(L, s)
    elif attn_mask == "bool3":
        masks["attn_mask"] = bool_mask(N * H, L, s)
    elif attn_mask == "float3":
        masks["attn_mask"] = float_mask(N * H, L, s)
    elif attn_mask == "bool3heads":  # unbatched: [heads, L, S]
        masks["attn_mask"] = bool_mask(H, L, s)
    if key_padding:
        kp = torch.zeros(N, s, dtype=torch.bool)
        kp[0, s - 2:] = True  # padding at the end of the first sequence
        kp[1, 1] = True
        masks["key_padding_mask"] = kp[0] if unbatched else kp

    def call(m, xs, ms):
        q = xs["q"]
        k, v = (q, q) if self_attn else (xs["k"], xs["v"])
        return m(q, k, v, key_padding_mask=ms.get("key_padding_mask"), need_weights=need_weights,
                 attn_mask=ms.get("attn_mask"), average_attn_weights=average)

    config = {"embed": E, "heads": H, "batch_first": batch_first, "self_attention": self_attn,
              "kdim": kdim or E, "vdim": vdim or E, "bias": bias, "add_bias_kv": add_bias_kv,
              "add_zero_attn": add_zero_attn, "unbatched": unbatched}
    return run_case(name, "mha", config, mha, inputs, call, masks,
                    {"need_weights": need_weights, "average_attn_weights": average})


def layer_config(norm_first, activation, batch_first, eps=1e-5):
    return {"embed": E, "heads": H, "dim_feedforward": FF, "norm_first": norm_first,
            "activation": activation, "batch_first": batch_first, "layer_norm_eps": eps}


def encoder_case(name, stack=0, final_norm=False, norm_first=False, activation="relu",
                 batch_first=False, eps=1e-5, mask=None, key_padding=False, unbatched=False):
    layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=FF, dropout=0.0, activation=activation,
                                       layer_norm_eps=eps, batch_first=batch_first, norm_first=norm_first)
    module = layer
    config = layer_config(norm_first, activation, batch_first, eps)
    if stack:
        norm = nn.LayerNorm(E, eps=eps) if final_norm else None
        module = nn.TransformerEncoder(layer, stack, norm=norm, enable_nested_tensor=False)
        config.update(num_layers=stack, final_norm=final_norm)
    masks = {}
    if mask == "bool":
        masks["mask"] = bool_mask(L, L)
    elif mask == "float":
        masks["mask"] = float_mask(L, L)
    if key_padding:
        kp = torch.zeros(N, L, dtype=torch.bool)
        kp[1, L - 2:] = True
        masks["src_key_padding_mask"] = kp

    def call(m, xs, ms):
        if stack:
            return m(xs["src"], mask=ms.get("mask"), src_key_padding_mask=ms.get("src_key_padding_mask")), None
        return m(xs["src"], src_mask=ms.get("mask"), src_key_padding_mask=ms.get("src_key_padding_mask")), None

    src = randn(L, E) if unbatched else seq(N, L, E, batch_first)
    config["unbatched"] = unbatched
    return run_case(name, "encoder" if stack else "encoder_layer", config, module,
                    {"src": src}, call, masks, {})


def decoder_case(name, stack=0, final_norm=False, norm_first=False, activation="relu",
                 batch_first=False, masks_on=True):
    layer = nn.TransformerDecoderLayer(E, H, dim_feedforward=FF, dropout=0.0, activation=activation,
                                       batch_first=batch_first, norm_first=norm_first)
    module = layer
    config = layer_config(norm_first, activation, batch_first)
    if stack:
        norm = nn.LayerNorm(E) if final_norm else None
        module = nn.TransformerDecoder(layer, stack, norm=norm)
        config.update(num_layers=stack, final_norm=final_norm)
    masks = {}
    if masks_on:
        # A causal target mask (bool, as generate_square_subsequent_mask's
        # -inf positions), a float memory mask and both padding masks.
        masks["tgt_mask"] = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
        masks["memory_mask"] = float_mask(L, S)
        tkp = torch.zeros(N, L, dtype=torch.bool)
        tkp[0, L - 1] = True
        mkp = torch.zeros(N, S, dtype=torch.bool)
        mkp[1, S - 3:] = True
        masks["tgt_key_padding_mask"] = tkp
        masks["memory_key_padding_mask"] = mkp

    def call(m, xs, ms):
        return m(xs["tgt"], xs["memory"], tgt_mask=ms.get("tgt_mask"), memory_mask=ms.get("memory_mask"),
                 tgt_key_padding_mask=ms.get("tgt_key_padding_mask"),
                 memory_key_padding_mask=ms.get("memory_key_padding_mask")), None

    inputs = {"tgt": seq(N, L, E, batch_first), "memory": seq(N, S, E, batch_first)}
    return run_case(name, "decoder" if stack else "decoder_layer", config, module, inputs, call, masks, {})


def main():
    cases = [
        mha_case("mha_cross_seqfirst"),
        mha_case("mha_self_batchfirst_floatmask_perhead", batch_first=True, self_attn=True,
                 attn_mask="float2", average=False),
        mha_case("mha_kdim_vdim_boolmask_padding", kdim=5, vdim=7, attn_mask="bool2", key_padding=True),
        mha_case("mha_3d_float_mask_padding_nobias_biaskv_zeroattn", batch_first=True, bias=False,
                 add_bias_kv=True, add_zero_attn=True, attn_mask="float3", key_padding=True, average=False),
        mha_case("mha_3d_bool_mask_no_weights", attn_mask="bool3", key_padding=True, need_weights=False),
        encoder_case("encoder_layer_post_relu_seqfirst_masks", mask="bool", key_padding=True),
        encoder_case("encoder_layer_pre_gelu_batchfirst_eps", norm_first=True, activation="gelu",
                     batch_first=True, eps=1e-6, mask="float"),
        encoder_case("encoder_stack3_post_norm_padding", stack=3, final_norm=True, batch_first=True,
                     key_padding=True, mask="float"),
        encoder_case("encoder_stack2_pre_gelu_no_norm", stack=2, norm_first=True, activation="gelu"),
        mha_case("mha_unbatched_cross_kdim_3d_boolmask_padding_perhead", kdim=5, vdim=5, attn_mask="bool3heads",
                 key_padding=True, average=False, unbatched=True),
        mha_case("mha_unbatched_self_batchfirst", batch_first=True, self_attn=True, unbatched=True),
        encoder_case("encoder_layer_unbatched_post_boolmask", mask="bool", unbatched=True),
        decoder_case("decoder_layer_post_relu_masks"),
        decoder_case("decoder_layer_pre_gelu_batchfirst_nomask", norm_first=True, activation="gelu",
                     batch_first=True, masks_on=False),
        decoder_case("decoder_stack2_pre_norm_batchfirst", stack=2, final_norm=True, norm_first=True,
                     batch_first=True),
    ]
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
