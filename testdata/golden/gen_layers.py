#!/usr/bin/python3
"""Writes testdata/golden/nn/layers.json: PyTorch's GroupNorm, Conv1d, LSTM, GRU and Conv3d.

Run with Debian's python3-torch (`/usr/bin/python3 testdata/golden/gen_layers.py`);
no other packages. Deterministic: every draw comes from one seeded generator.

For each case the script builds the torch.nn layer with the case's options,
gives every parameter random float32 values (GroupNorm's weight and bias
too, so that they are not 1 and 0), draws a float32 input (and for
LSTM/GRU, sometimes an initial state) and random float32 weights r, then
runs the layer in float64 and takes the gradient of

    loss = sum(out * r) [+ sum(h_n * r_h) [+ sum(c_n * r_c)]]   (LSTM/GRU)

with respect to the input, the initial state and every parameter. The
nn package's test (nn/layers_golden_test.go) loads the state dict by
name, runs the same layer on cpu (float64, float32) and every WebGPU
adapter (float32) and compares.

File format:

    {"torch": VERSION, "cases": [CASE, ...]}
    CASE = {"name": str, "layer": "GroupNorm" | "Conv1d" | "LSTM" | "GRU" | "Conv3d",
            "config": {constructor keyword arguments, PyTorch's names},
            "training": bool,
            "state": {state-dict name: TENSOR},
            "state_order": [state-dict name, ...],       # PyTorch's order
            "x": TENSOR, "h0": TENSOR?, "c0": TENSOR?,     # inputs
            "r": TENSOR, "r_h": TENSOR?, "r_c": TENSOR?,   # loss weights
            "out": TENSOR, "h_n": TENSOR?, "c_n": TENSOR?, # outputs
            "grads": {"x" | "h0" | "c0" | state-dict name: TENSOR}}
    TENSOR = {"shape": [...], "data": [...]}   # row-major

The script checks that PyTorch's own float32 run of every case stays
within half the Go test's cpu float32 tolerance (TOL below), so that no
case is an ill-conditioned draw (GroupNorm over a group of nearly equal
values amplifies rounding far beyond any tolerance).

Inputs and weights are float32 values written exactly (repr of the
float64 that holds them); outputs and gradients are float64 results.
"""

import json
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "layers.json")

gen = torch.Generator().manual_seed(16)


def randn(*shape, scale=1.0):
    return (torch.randn(*shape, generator=gen) * scale).float().double()


def enc(t):
    t = t.detach().double().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


# The Go test's float32 tolerance on cpu (nn/helpers_test.go): |Δ| ≤ TOL·(1 + |want|).
TOL = 2e-5


def run(m, layer, inputs, rs, wrt_extra):
    """Runs m on inputs and returns (outputs, grads of the weighted sum)."""
    x = inputs["x"]
    if layer in ("LSTM", "GRU"):
        if "h0" in inputs:
            st = (inputs["h0"], inputs["c0"]) if layer == "LSTM" else inputs["h0"]
            out, fin = m(x, st)
        else:
            out, fin = m(x)
        h_n, c_n = fin if layer == "LSTM" else (fin, None)
    else:
        out, h_n, c_n = m(x), None, None
    outs = {"out": out, "h_n": h_n, "c_n": c_n}
    loss = 0
    for k, rk in (("out", "r"), ("h_n", "r_h"), ("c_n", "r_c")):
        if outs[k] is not None:
            if rk not in rs:
                rs[rk] = randn(*outs[k].shape)
            loss = loss + (outs[k] * rs[rk].to(outs[k].dtype)).sum()
    gs = torch.autograd.grad(loss, list(inputs.values()) + wrt_extra)
    return outs, gs


def check_conditioning(name, m, layer, inputs, rs, want_outs, want_gs):
    """Requires PyTorch's own float32 run to stay within half the Go test's
    float32 tolerance, so that a failure there is the Go code's, not an
    ill-conditioned draw's."""
    m32 = m.float()
    ins32 = {k: v.detach().float().requires_grad_(True) for k, v in inputs.items()}
    outs, gs = run(m32, layer, ins32, rs, list(m32.parameters()))
    m.double()
    pairs = [(outs[k], want_outs[k]) for k in outs if outs[k] is not None] + list(zip(gs, want_gs))
    for got, want in pairs:
        err = ((got.double() - want).abs() / (1 + want.abs())).max().item()
        assert err <= TOL / 2, f"{name}: PyTorch's float32 run is off by {err:.2e}·(1+|want|)"


def case(name, layer, config, x_shape, training=False, state=False):
    cls = getattr(torch.nn, layer)
    torch.manual_seed(len(name))
    m = cls(**config)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(randn(*p.shape, scale=0.5))
    m = m.double()
    m.train(training)
    x = randn(*x_shape).requires_grad_(True)
    inputs = {"x": x}
    rec = layer in ("LSTM", "GRU")
    if rec and state:
        d = 2 if config.get("bidirectional") else 1
        L = config.get("num_layers", 1)
        H = config["hidden_size"]
        batched = len(x_shape) == 3
        n = (x_shape[0] if config.get("batch_first") else x_shape[1]) if batched else None
        sshape = (L * d, n, H) if batched else (L * d, H)
        inputs["h0"] = randn(*sshape).requires_grad_(True)
        if layer == "LSTM":
            inputs["c0"] = randn(*sshape).requires_grad_(True)
    rs = {}
    params = [p for _, p in m.named_parameters()]
    outs, gs = run(m, layer, inputs, rs, params)
    out, h_n, c_n = outs["out"], outs["h_n"], outs["c_n"]
    check_conditioning(name, m, layer, inputs, rs, outs, gs)
    names = [n for n, _ in m.named_parameters()]
    grads = {k: enc(g) for k, g in zip(list(inputs.keys()) + names, gs)}
    c = {
        "name": name,
        "layer": layer,
        "config": config,
        "training": training,
        "state": {k: enc(v) for k, v in m.state_dict().items()},
        "state_order": list(m.state_dict().keys()),
        "out": enc(out),
        "grads": grads,
    }
    for k, v in inputs.items():
        c[k] = enc(v)
    for k, v in rs.items():
        c[k] = enc(v)
    if h_n is not None:
        c["h_n"] = enc(h_n)
    if c_n is not None:
        c["c_n"] = enc(c_n)
    return c


def main():
    cases = [
        case("groupnorm_g1", "GroupNorm", dict(num_groups=1, num_channels=6), (3, 6, 5)),
        case("groupnorm_g3", "GroupNorm", dict(num_groups=3, num_channels=6), (2, 6, 7)),
        case("groupnorm_gC", "GroupNorm", dict(num_groups=6, num_channels=6), (2, 6, 5)),
        case("groupnorm_4d_eps", "GroupNorm", dict(num_groups=3, num_channels=9, eps=1e-3), (2, 9, 3, 5)),
        case("groupnorm_2d_noaffine", "GroupNorm", dict(num_groups=3, num_channels=9, affine=False), (5, 9)),
        case("conv1d_plain", "Conv1d", dict(in_channels=3, out_channels=5, kernel_size=3), (2, 3, 11)),
        case("conv1d_stride_pad_dil", "Conv1d",
             dict(in_channels=4, out_channels=3, kernel_size=3, stride=2, padding=2, dilation=2), (3, 4, 13)),
        case("conv1d_groups_nobias", "Conv1d",
             dict(in_channels=6, out_channels=9, kernel_size=2, groups=3, bias=False, padding=1), (2, 6, 7)),
        case("conv1d_unbatched", "Conv1d", dict(in_channels=2, out_channels=3, kernel_size=5, stride=3), (2, 17)),
    ]
    for layer in ("LSTM", "GRU"):
        lo = layer.lower()
        cases += [
            case(lo + "_1layer", layer, dict(input_size=3, hidden_size=5), (4, 2, 3)),
            case(lo + "_2layer_batch_first_state", layer,
                 dict(input_size=3, hidden_size=5, num_layers=2, batch_first=True), (3, 5, 3), state=True),
            case(lo + "_2layer_bidir_state", layer,
                 dict(input_size=4, hidden_size=3, num_layers=2, bidirectional=True), (5, 2, 4), state=True),
            case(lo + "_bidir_batch_first_nobias", layer,
                 dict(input_size=3, hidden_size=5, bias=False, batch_first=True, bidirectional=True), (2, 4, 3)),
            case(lo + "_unbatched_2layer_dropout_eval", layer,
                 dict(input_size=3, hidden_size=4, num_layers=2, dropout=0.3), (6, 3), state=True),
        ]
    # Last, so that the cases above keep their draws.
    cases += [
        case("conv3d_plain", "Conv3d", dict(in_channels=2, out_channels=3, kernel_size=3, padding=1), (2, 2, 4, 5, 3)),
        case("conv3d_stride_dil_groups_nobias", "Conv3d",
             dict(in_channels=4, out_channels=6, kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 0, 1),
                  dilation=(1, 2, 1), groups=2, bias=False), (2, 4, 5, 6, 5)),
        case("conv3d_unbatched", "Conv3d", dict(in_channels=2, out_channels=2, kernel_size=(2, 3, 1)), (2, 3, 4, 3)),
    ]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", OUT, len(cases), "cases")


if __name__ == "__main__":
    main()
