#!/usr/bin/python3
"""Writes testdata/golden/nn/train.json: PyTorch training trajectories.

Run with Debian's python3-torch (`/usr/bin/python3 testdata/golden/gen_train.py`);
no other packages. Deterministic: every draw comes from seeded generators.

Two models, each trained for STEPS steps on fixed batches with mean
cross-entropy, once with SGD (momentum 0.9, lr 0.05) and once with Adam
(lr 1e-3, PyTorch's default betas and eps), torch.optim's single-tensor
(foreach=False) implementations:

    mlp: Sequential(Linear(20, 32), ReLU, Linear(32, 16), ReLU, Linear(16, 5))
    cnn: Sequential(Conv2d(1, 4, 3, padding=1), ReLU, MaxPool2d(2), Flatten,
                    Linear(4*4*4, 5))                       on [N, 1, 8, 8]

The nn package's golden test (nn/train_golden_test.go) builds the same
models, loads "init", trains on cpu and webgpu in float32 and compares.

File format:

    {"torch": VERSION, "steps": 20, "batch": 8, "models": [MODEL, ...]}

    MODEL = {"name": "mlp" | "cnn", "arch": PyTorch's repr of the model,
             "init": {state-dict name: TENSOR},        # float32 initial weights
             "x": TENSOR,                               # the data set, float32
             "y": [int, ...],                           # its class labels
             "batches": [[index into x, ...], ...],     # step k trains on x[batches[k]]
             "runs": [RUN, ...]}
    RUN   = {"optimizer": "sgd" | "adam", "config": {lr, momentum | betas, eps},
             "loss": [float, ...],           # step k's loss, before step k's update
             "loss_float32": [float, ...],   # PyTorch's own float32 run, for comparison
             "final": {state-dict name: TENSOR}}   # parameters after the last step
    TENSOR = {"shape": [...], "data": [...]}   # row-major

The data set is 64 samples, reshuffled (seeded randperm) every epoch of 8
batches of 8, as a training loop would draw it: 20 batches, and a file far
smaller than 20 stored batches.

Reference trajectory: "loss" and "final" are PyTorch's run of the same
training in float64, from the float32 initial weights and data (exactly
representable in both), so they are the answer to the float32 problem
without float32's rounding; "loss_float32" is PyTorch's float32 run. The
float32 data and weights are written as the shortest decimal that parses
back (float64 parse, then float32 rounding, as Go's encoding/json into
float32 does) to the same float32; final parameters likewise, rounded to
float32 (that rounding, 3e-8 relative, is far below the test's tolerance);
losses in full float64.

The inputs are quantized (multiples of 1/16, short decimals) and the labels
come from a random "teacher" of the same shape so the loss visibly falls.
The script checks that PyTorch's float32 trajectory stays within a tenth of
the Go test's float32 tolerance (see TOLERANCE below and the test).
"""

import json
import math
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "train.json")

STEPS = 20
BATCH = 8
SAMPLES = 64
SEED = 20250705

# The Go test's float32 tolerance (nn/train_golden_test.go explains it):
#   loss at step k:  |Δ| ≤ LOSS_RTOL·(1 + k/STEPS)·(1 + |loss|)
#   final parameter tensor: |Δ| ≤ PARAM_RTOL·max|want| + PARAM_ATOL, per element
LOSS_RTOL = 1e-4
PARAM_RTOL = 1e-4
PARAM_ATOL = 1e-6


def f32_short(v):
    """The shortest decimal that rounds (via float64) to the float32 v."""
    for p in range(1, 10):
        s = float("%.*g" % (p, v))
        if struct.unpack("f", struct.pack("f", s))[0] == v:
            return int(s) if s == int(s) and abs(s) < 1e9 else s
    raise AssertionError(v)


def enc32(t):
    t = t.detach().to(torch.float32).contiguous()
    return {"shape": list(t.shape), "data": [f32_short(v) for v in t.reshape(-1).tolist()]}


def quantized(gen, shape, lo, hi, step):
    k = int(round((hi - lo) / step))
    return (torch.randint(0, k + 1, shape, generator=gen).to(torch.float64) * step + lo).to(torch.float32)


def mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 5))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(4 * 4 * 4, 5))


def batches(gen):
    out = []
    while len(out) < STEPS:
        perm = torch.randperm(SAMPLES, generator=gen).tolist()
        out += [perm[i:i + BATCH] for i in range(0, SAMPLES, BATCH)]
    return out[:STEPS]


def make_optimizer(kind, params):
    if kind == "sgd":
        cfg = {"lr": 0.05, "momentum": 0.9}
        return cfg, torch.optim.SGD(params, lr=cfg["lr"], momentum=cfg["momentum"], foreach=False)
    cfg = {"lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8}
    return cfg, torch.optim.Adam(params, lr=cfg["lr"], betas=tuple(cfg["betas"]), eps=cfg["eps"], foreach=False)


def train(build, init, x, y, order, kind, dtype):
    model = build().to(dtype)
    model.load_state_dict({k: v.to(dtype) for k, v in init.items()})
    cfg, opt = make_optimizer(kind, model.parameters())
    x = x.to(dtype)
    losses = []
    for idx in order:
        i = torch.tensor(idx)
        opt.zero_grad()
        loss = F.cross_entropy(model(x[i]), y[i])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return cfg, losses, {k: v.detach().clone() for k, v in model.state_dict().items()}


def gen_model(name, build, in_shape, x_range, seed):
    torch.manual_seed(seed)
    model = build()
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    gen = torch.Generator().manual_seed(seed + 1)
    x = quantized(gen, (SAMPLES,) + in_shape, x_range[0], x_range[1], 1 / 16)
    # Labels from a teacher net of the same shape (its own random weights),
    # so there is something to learn in 20 steps.
    torch.manual_seed(seed + 2)
    teacher = build()
    with torch.no_grad():
        y = teacher(x).argmax(1)
    order = batches(gen)
    m = {"name": name, "arch": " ".join(repr(model).split()),
         "init": {k: enc32(v) for k, v in init.items()},
         "x": enc32(x), "y": y.tolist(), "batches": order, "runs": []}
    for kind in ("sgd", "adam"):
        cfg, want, final = train(build, init, x, y, order, kind, torch.float64)
        _, got, final32 = train(build, init, x, y, order, kind, torch.float32)
        # How much of the float32 tolerance PyTorch's own float32 run uses.
        worst_loss = max(abs(g - w) / (LOSS_RTOL * (1 + k / STEPS) * (1 + abs(w)))
                         for k, (g, w) in enumerate(zip(got, want)))
        worst_param = 0.0
        for k, w in final.items():
            err = (final32[k].to(torch.float64) - w).abs().max().item()
            worst_param = max(worst_param, err / (PARAM_RTOL * w.abs().max().item() + PARAM_ATOL))
        print("  %s/%s: loss %.4f → %.4f; PyTorch float32 uses %.2g (loss), %.2g (params) of the tolerance"
              % (name, kind, want[0], want[-1], worst_loss, worst_param))
        assert worst_loss < 0.1 and worst_param < 0.1, (name, kind, worst_loss, worst_param)
        m["runs"].append({"optimizer": kind, "config": cfg, "loss": want,
                          "loss_float32": [f32_short(struct.unpack("f", struct.pack("f", v))[0]) for v in got],
                          "final": {k: enc32(v) for k, v in final.items()}})
    return m


def main():
    torch.set_num_threads(1)  # summation order, hence the float32 run, independent of the machine
    models = [
        gen_model("mlp", mlp, (20,), (-2.0, 2.0), SEED),
        gen_model("cnn", cnn, (1, 8, 8), (0.0, 1.0), SEED + 100),
    ]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write('{"torch":%s,"steps":%d,"batch":%d,"models":[\n' % (json.dumps(torch.__version__), STEPS, BATCH))
        f.write(",\n".join(json.dumps(m, separators=(",", ":"), allow_nan=False) for m in models))
        f.write("\n]}\n")
    print("%s: %d bytes" % (OUT, os.path.getsize(OUT)))


if __name__ == "__main__":
    main()
