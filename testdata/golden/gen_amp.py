#!/usr/bin/python3
"""Writes golden data for package nn/amp: testdata/golden/nn/amp.json.

Run with Debian's python3-torch 1.13 (`/usr/bin/python3
testdata/golden/gen_amp.py`). torch.cuda.amp.GradScaler's arithmetic is in
two operations, torch._amp_foreach_non_finite_check_and_unscale_ and
torch._amp_update_scale_, which PyTorch 1.13 implements for CUDA only
(calling them on CPU tensors raises "Could not run ... with arguments from
the 'CPU' backend"), so this script states them in Python, in float32
torch tensors, as aten/src/ATen/native/cuda/AmpKernels.cu computes them:

  unscale: inv_scale = scale.double().reciprocal().float();
           found_inf = 1 if any gradient element is Inf or NaN;
           every gradient *= inv_scale (float32)
  update:  (the factors are doubles: each product is computed in double and
           rounded to the float32 scale)
           if found_inf: scale *= backoff_factor; growth_tracker = 0
           else: successful = growth_tracker + 1
                 if successful == growth_interval:
                     new_scale = float32(scale * growth_factor)
                     if isfinite(new_scale): scale = new_scale
                     growth_tracker = 0
                 else: growth_tracker = successful

and GradScaler.step skips optimizer.step() when found_inf.

    {"torch": VERSION,
     "updates": [{"name", "config": {Go field: value}, "found_inf": [bool, ...],
                  "scale": [...], "growth_tracker": [...]}],   # after each update
     "training": {"config", "lr", "x": {shape, data}, "y": [...], "init": {shape, data},
                  "inject": [bool, ...],  # the step's gradient gets an Inf
                  "stepped": [bool, ...], "scale": [...], "weight": [[...], ...]}}
"""

import json
import math
import torch

torch.manual_seed(19)


def f32(x):
    return float(torch.tensor(x, dtype=torch.float32))


def update(scale, tracker, found, cfg):
    scale = torch.tensor(scale, dtype=torch.float64)
    if found:
        return f32(float(scale * cfg["BackoffFactor"])), 0
    successful = tracker + 1
    if successful == cfg["GrowthInterval"]:
        new = (scale * cfg["GrowthFactor"]).float()
        if torch.isfinite(new):
            scale = new
        return float(scale), 0
    return float(scale), successful


def unscale(grads, scale):
    inv = torch.tensor([scale], dtype=torch.float32).double().reciprocal().float()
    found = any(not bool(torch.isfinite(g).all()) for g in grads)
    for g in grads:
        g.mul_(inv)
    return found


DEFAULTS = {"InitScale": 65536.0, "GrowthFactor": 2.0, "BackoffFactor": 0.5, "GrowthInterval": 2000}

updates = []
for name, cfg, found in [
    ("small-interval", {"InitScale": 1024.0, "GrowthFactor": 2.0, "BackoffFactor": 0.5, "GrowthInterval": 3},
     [False] * 7 + [True, True] + [False] * 4 + [True] + [False] * 3),
    ("odd-factors", {"InitScale": 3.0, "GrowthFactor": 3.5, "BackoffFactor": 0.3, "GrowthInterval": 2},
     [False, False, True, False, False, False, True, True, False, False]),
    ("overflow-skips-growth", {"InitScale": 2.0 ** 126, "GrowthFactor": 4.0, "BackoffFactor": 0.5, "GrowthInterval": 1},
     [False, False, True, False, False]),
    ("defaults", dict(DEFAULTS), [False] * 1999 + [False, True] + [False] * 5),
]:
    scale, tracker = f32(cfg["InitScale"]), 0
    scales, trackers = [], []
    for fnd in found:
        scale, tracker = update(scale, tracker, fnd, cfg)
        scales.append(scale)
        trackers.append(tracker)
    updates.append({"name": name, "config": cfg, "found_inf": found, "scale": scales, "growth_tracker": trackers})

# Training: a linear regression y ≈ x·wᵀ with SGD under the scaler, an Inf
# injected into the gradient on some steps; a skipped step leaves the weight.
cfg = {"InitScale": 256.0, "GrowthFactor": 2.0, "BackoffFactor": 0.5, "GrowthInterval": 2}
n, d = 13, 5
x = torch.randn(n, d)
y = torch.randn(n)
w0 = torch.randn(1, d) * 0.5
w = w0.clone().requires_grad_(True)
opt = torch.optim.SGD([w], lr=0.05)
inject = [False, False, True, False, False, False, True, True, False, False, False]
scale, tracker = f32(cfg["InitScale"]), 0
stepped, scales, weights = [], [], []
for k, inj in enumerate(inject):
    opt.zero_grad(set_to_none=True)
    loss = ((x @ w.t()).squeeze(1) - y).pow(2).mean()
    (loss * scale).backward()
    if inj:
        w.grad[0, k % d] = math.inf
    found = unscale([w.grad], scale)
    if not found:
        opt.step()
    stepped.append(not found)
    scale, tracker = update(scale, tracker, found, cfg)
    scales.append(scale)
    weights.append(w.detach().flatten().tolist())

out = {
    "torch": torch.__version__,
    "updates": updates,
    "training": {"config": cfg, "lr": 0.05,
                 "x": {"shape": [n, d], "data": x.flatten().tolist()}, "y": y.tolist(),
                 "init": {"shape": [1, d], "data": w0.flatten().tolist()},
                 "inject": inject, "stepped": stepped, "scale": scales, "weight": weights},
}
with open("testdata/golden/nn/amp.json", "w") as f:
    json.dump(out, f)
    f.write("\n")
