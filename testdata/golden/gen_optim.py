#!/usr/bin/python3
"""Writes PyTorch golden data for package nn/optim: testdata/golden/nn/optim.json.

Run with Debian's python3-torch 1.13 (`/usr/bin/python3
testdata/golden/gen_optim.py`); no other packages are needed. Inputs come
from one seeded torch.Generator drawn in a fixed order, so the output is
deterministic for a given PyTorch version.

    {"torch": VERSION,
     "steps": [STEPCASE, ...],
     "clip": [CLIPCASE, ...],
     "schedules": [SCHEDULE, ...]}

    STEPCASE = {"name", "optimizer": "sgd" | "adam" | "adamw" | "rmsprop" | "adagrad",
                "config": {Go config field: value}  # fields left out are zero (the default)
                "params": [{"shape", "init": [...],
                            "grads": [[...] or null, ...],   # one per step; null: no gradient
                            "after": [[...], ...]}]}         # the parameter after each step
    CLIPCASE = {"name", "max_norm", "grads": [{"shape", "data"}],
                "total_norm", "clipped": [[...], ...]}
    SCHEDULE = {"name", "kind": "step_lr" | "cosine", "args": {...}, "lrs": [...]}

Every step runs torch.optim's single-tensor implementation (foreach=False)
in float32, which is what nn/optim's fused kernels compute; a null gradient
(p.grad = None) skips the parameter that step, so its step count (Adam's
bias corrections, Adagrad's decay) lags the other parameter's. Floats are
the exact double value of each float32 (Go parses them back exactly).
"""

import json
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "optim.json")
GEN = torch.Generator().manual_seed(20240605)
STEPS = 5


def randn(n, scale=1.0):
    return (torch.randn(n, generator=GEN, dtype=torch.float64) * scale).to(torch.float32)


def floats(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


# Go config fields -> torch keyword arguments, per optimizer.
def torch_kwargs(optimizer, config):
    c = dict(config)
    kw = {}
    if "LR" in c:
        kw["lr"] = c.pop("LR")
    if optimizer == "sgd":
        names = {"Momentum": "momentum", "Dampening": "dampening",
                 "WeightDecay": "weight_decay", "Nesterov": "nesterov"}
    elif optimizer in ("adam", "adamw"):
        b1, b2 = c.pop("Beta1", 0.9), c.pop("Beta2", 0.999)
        kw["betas"] = (b1, b2)
        names = {"Eps": "eps", "WeightDecay": "weight_decay"}
    elif optimizer == "rmsprop":
        names = {"Alpha": "alpha", "Eps": "eps", "WeightDecay": "weight_decay",
                 "Momentum": "momentum", "Centered": "centered"}
    else:
        names = {"LRDecay": "lr_decay", "WeightDecay": "weight_decay",
                 "InitialAccumulator": "initial_accumulator_value", "Eps": "eps"}
    for k, v in c.items():
        kw[names[k]] = v
    return kw


CLASSES = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "rmsprop": torch.optim.RMSprop,
    "adagrad": torch.optim.Adagrad,
}


def step_case(name, optimizer, config, sizes=(11,), skips=()):
    """skips: (param index, step) pairs where that parameter has no gradient."""
    params, out = [], []
    for i, n in enumerate(sizes):
        p = torch.nn.Parameter(randn(n))
        out.append({"shape": [n], "init": floats(p), "grads": [], "after": []})
        params.append(p)
    kw = torch_kwargs(optimizer, config)
    if optimizer == "sgd" and "lr" not in kw:
        raise ValueError("SGD needs an lr")
    opt = CLASSES[optimizer](params, foreach=False, **kw)
    for step in range(STEPS):
        for i, p in enumerate(params):
            if (i, step) in skips:
                p.grad = None
                out[i]["grads"].append(None)
            else:
                g = randn(p.numel())
                p.grad = g.clone()
                out[i]["grads"].append(floats(g))
        opt.step()
        for i, p in enumerate(params):
            out[i]["after"].append(floats(p))
    return {"name": name, "optimizer": optimizer, "config": config, "params": out}


def clip_case(name, shapes, max_norm, scale):
    ps = []
    grads = []
    for s in shapes:
        n = 1
        for d in s:
            n *= d
        p = torch.nn.Parameter(torch.zeros(s))
        g = randn(n, scale).reshape(s)
        p.grad = g.clone()
        ps.append(p)
        grads.append({"shape": list(s), "data": floats(g)})
    total = torch.nn.utils.clip_grad_norm_(ps, max_norm)
    return {"name": name, "max_norm": max_norm, "grads": grads,
            "total_norm": float(total), "clipped": [floats(p.grad) for p in ps]}


def schedule(name, kind, args, n):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=args["base"])
    if kind == "step_lr":
        s = torch.optim.lr_scheduler.StepLR(opt, args["step_size"], gamma=args["gamma"])
    else:
        s = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args["t_max"], eta_min=args["eta_min"])
    lrs = []
    for _ in range(n):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        s.step()
    return {"name": name, "kind": kind, "args": args, "lrs": lrs}


def main():
    steps = [
        step_case("sgd_plain", "sgd", {"LR": 0.1}, sizes=(7,)),
        step_case("sgd_momentum", "sgd", {"LR": 0.05, "Momentum": 0.9}),
        step_case("sgd_nesterov", "sgd", {"LR": 0.05, "Momentum": 0.9, "Nesterov": True}, sizes=(13,)),
        step_case("sgd_dampening", "sgd", {"LR": 0.05, "Momentum": 0.8, "Dampening": 0.3}),
        step_case("sgd_weight_decay", "sgd", {"LR": 0.1, "Momentum": 0.9, "WeightDecay": 0.01}, sizes=(9,)),
        step_case("sgd_skipped_steps", "sgd", {"LR": 0.1, "Momentum": 0.9},
                  sizes=(8, 7), skips={(1, 0), (1, 2)}),
        step_case("adam_default", "adam", {}),
        step_case("adam_options", "adam", {"LR": 0.01, "Beta1": 0.8, "Beta2": 0.99, "Eps": 1e-6,
                                           "WeightDecay": 0.1}, sizes=(12,)),
        step_case("adam_skipped_steps", "adam", {"LR": 0.01}, sizes=(7, 10), skips={(1, 0), (1, 1), (1, 3)}),
        step_case("adamw_default", "adamw", {}, sizes=(10,)),
        step_case("adamw_options", "adamw", {"LR": 0.02, "Beta1": 0.85, "Beta2": 0.995, "Eps": 1e-7,
                                             "WeightDecay": 0.05}),
        step_case("rmsprop_plain", "rmsprop", {}, sizes=(9,)),
        step_case("rmsprop_momentum", "rmsprop", {"LR": 0.01, "Alpha": 0.9, "Momentum": 0.9,
                                                  "WeightDecay": 0.01}),
        step_case("rmsprop_centered", "rmsprop", {"LR": 0.005, "Centered": True}, sizes=(8,)),
        step_case("rmsprop_centered_momentum", "rmsprop", {"LR": 0.005, "Momentum": 0.5, "Centered": True,
                                                           "Eps": 1e-6}),
        step_case("adagrad_default", "adagrad", {}, sizes=(10,)),
        step_case("adagrad_options", "adagrad", {"LR": 0.1, "LRDecay": 0.05, "WeightDecay": 0.02,
                                                 "InitialAccumulator": 0.5, "Eps": 1e-8}),
        step_case("adagrad_skipped_steps", "adagrad", {"LR": 0.1, "LRDecay": 0.1}, sizes=(7, 9),
                  skips={(1, 1)}),
    ]
    clips = [
        clip_case("clipped", [(3, 4), (5,), (2, 1, 3)], 1.0, 1.0),
        clip_case("not_clipped", [(7,), (2, 3)], 100.0, 1.0),
        clip_case("one_grad", [(4, 3)], 0.5, 3.0),
    ]
    schedules = [
        schedule("step_lr", "step_lr", {"base": 0.1, "step_size": 3, "gamma": 0.5}, 12),
        schedule("step_lr_default_gamma", "step_lr", {"base": 0.3, "step_size": 2, "gamma": 0.1}, 7),
        schedule("cosine", "cosine", {"base": 0.1, "t_max": 8, "eta_min": 0.001}, 9),
        schedule("cosine_to_zero", "cosine", {"base": 0.05, "t_max": 5, "eta_min": 0.0}, 6),
    ]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write('{"torch":%s,\n"steps":[\n' % json.dumps(torch.__version__))
        f.write(",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in steps))
        f.write('],\n"clip":[\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in clips))
        f.write('],\n"schedules":[\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in schedules))
        f.write("]}\n")


if __name__ == "__main__":
    main()
