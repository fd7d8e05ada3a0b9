#!/usr/bin/python3
"""Writes PyTorch golden data for einsum, interpolate, masked_fill,
masked_select, tril/triu, roll and flip (issue 19's shape ops) to
testdata/golden/shape/ops.json.

Run with Debian's python3-torch (`make golden`, or `/usr/bin/python3
testdata/golden/gen_shape_ops.py`). Inputs come from a seeded
torch.Generator, so the output is deterministic for one PyTorch version.

    {"torch": VERSION, "cases": [CASE, ...]}

    CASE   = {"name", "op", "args": {...}, "inputs": [INPUT, ...],
              "out": {"shape", "data"},
              "gout": [...],        # the gradient seeded at the output
              "grads": [[...] or null, ...]}   # d(sum(out*gout))/d(input)
    INPUT  = {"dtype": "float32" | "float64" | "int32", "shape", "data"
              [, "transpose": [d0, d1]]}      # a non-contiguous view
                                              # of the stored base

Float data are the exact doubles of the stored values; NaN and infinities
are the strings "nan", "inf", "-inf". The outputs are PyTorch's own
float64 results for float64 cases and float32 results otherwise; the Go
tests compare with a tolerance.
"""

import json
import math
import os

import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shape", "ops.json")
GEN = torch.Generator().manual_seed(20261127)


def num(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def flat(t):
    return [num(v) for v in t.detach().reshape(-1).tolist()]


def rand(*shape, dtype=torch.float32):
    return (torch.rand(tuple(shape), generator=GEN, dtype=torch.float64) * 4 - 2).to(dtype)


def mask(*shape, p=0.5):
    return (torch.rand(tuple(shape), generator=GEN) < p).to(torch.int32)


CASES = []


def case(name, op, args, inputs, fn, grad=None):
    """inputs: list of (base tensor, transpose or None). fn maps the
    (viewed) inputs to the output. grad lists which inputs get gradients
    (default: every float input)."""
    views, specs = [], []
    for base, tr in inputs:
        spec = {"dtype": str(base.dtype).replace("torch.", ""), "shape": list(base.shape), "data": flat(base)}
        v = base.clone()
        if tr is not None:
            spec["transpose"] = tr
            v = v.transpose(*tr)
        if v.is_floating_point():
            v.requires_grad_(True)
        views.append(v)
        specs.append(spec)
    out = fn(*views)
    c = {"name": name, "op": op, "args": args, "inputs": specs,
         "out": {"shape": list(out.shape), "data": flat(out)}}
    if out.is_floating_point() and out.numel() > 0:
        gout = rand(*out.shape, dtype=out.dtype)
        wants = [v.is_floating_point() and (grad is None or i in grad) for i, v in enumerate(views)]
        grads = torch.autograd.grad(out, [v for v, w in zip(views, wants) if w], gout, allow_unused=True)
        it = iter(grads)
        c["gout"] = flat(gout)
        c["grads"] = [flat(next(it)) if w else None for w in wants]
    CASES.append(c)


# einsum: matrix products, diagonals, traces, ellipsis broadcasting, sums,
# three and four operands (the contraction order is the greedy one).
EINSUM = [
    ("matmul", "ij,jk->ik", [(3, 5), (5, 7)], [None, None]),
    ("implicit", "ij,jk", [(3, 5), (5, 7)], [None, [0, 1]]),
    ("transposed", "ij,jk->ki", [(3, 5), (5, 7)], [[0, 1], None]),
    ("diag", "ii->i", [(5, 5)], [None]),
    ("trace", "ii", [(6, 6)], [[0, 1]]),
    ("diag3", "iji->j", [(3, 4, 3)], [None]),
    ("sum_all", "ijk->", [(2, 3, 5)], [None]),
    ("permute", "ijk->kij", [(2, 3, 5)], [None]),
    ("batch", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], [None, [1, 2]]),
    ("ellipsis_bcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 5)], [None, None]),
    ("ellipsis_sum", "...ij->ij", [(2, 3, 4)], [None]),
    ("ellipsis_implicit", "bA,...", [(2, 3), (5,)], [None, None]),
    ("size1_bcast", "ij,j->i", [(3, 4), (1,)], [None, None]),
    ("outer", "i,j->ij", [(3,), (4,)], [None, None]),
    ("attention", "bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 7, 4)], [None, [2, 3]]),
    ("bilinear", "bn,anm,bm->ba", [(3, 4), (2, 4, 5), (3, 5)], [None, None, None]),
    ("chain4", "ab,bc,cd,de->ae", [(3, 7), (7, 2), (2, 9), (9, 3)], [None, None, None, None]),
    ("hadamard_sum", "ij,ij,ij->j", [(4, 3), (4, 3), (4, 3)], [None, None, [0, 1]]),
    ("diag_mix", "ii,ij->j", [(3, 3), (3, 5)], [None, None]),
]
for name, eq, shapes, trs in EINSUM:
    ins = []
    for s, tr in zip(shapes, trs):
        base = rand(*s) if tr is None else rand(*s).transpose(*tr).contiguous()
        ins.append((base, tr))
    case("einsum_" + name, "einsum", {"equation": eq}, ins, lambda *xs, eq=eq: torch.einsum(eq, *xs))
case("einsum_f64", "einsum", {"equation": "ij,jk->ik"},
     [(rand(4, 6, dtype=torch.float64), None), (rand(6, 3, dtype=torch.float64), None)],
     lambda a, b: torch.einsum("ij,jk->ik", a, b))

# interpolate: every mode, align_corners both ways, sizes and scale factors
# (with and without recompute_scale_factor), up and down, odd sizes.
INTERP = [
    ("nearest_up", (2, 3, 5, 7), "nearest", None, {"size": [9, 11]}),
    ("nearest_down", (1, 2, 9, 7), "nearest", None, {"size": [4, 3]}),
    ("nearest_x2", (1, 2, 3, 5), "nearest", None, {"scale_factor": [2.0, 2.0]}),
    ("nearest_scale", (1, 2, 5, 7), "nearest", None, {"scale_factor": [1.7, 0.6]}),
    ("nearest_scale_recompute", (1, 2, 5, 7), "nearest", None, {"scale_factor": [1.7, 0.6], "recompute_scale_factor": True}),
    ("nearest_1d", (2, 3, 7), "nearest", None, {"size": [10]}),
    ("nearest_3d", (1, 2, 3, 4, 5), "nearest", None, {"size": [5, 3, 7]}),
    ("bilinear_up", (2, 3, 5, 7), "bilinear", False, {"size": [8, 13]}),
    ("bilinear_up_ac", (2, 3, 5, 7), "bilinear", True, {"size": [8, 13]}),
    ("bilinear_down", (1, 2, 11, 9), "bilinear", False, {"size": [4, 5]}),
    ("bilinear_down_ac", (1, 2, 11, 9), "bilinear", True, {"size": [4, 5]}),
    ("bilinear_scale", (1, 2, 5, 6), "bilinear", False, {"scale_factor": [1.5, 2.3]}),
    ("bilinear_scale_recompute", (1, 2, 5, 6), "bilinear", False, {"scale_factor": [1.5, 2.3], "recompute_scale_factor": True}),
    ("bilinear_to1", (1, 2, 5, 6), "bilinear", True, {"size": [1, 1]}),
    ("bicubic_up", (2, 2, 5, 7), "bicubic", False, {"size": [9, 12]}),
    ("bicubic_up_ac", (2, 2, 5, 7), "bicubic", True, {"size": [9, 12]}),
    ("bicubic_down", (1, 2, 10, 9), "bicubic", False, {"size": [4, 5]}),
    ("bicubic_scale", (1, 1, 4, 5), "bicubic", False, {"scale_factor": [2.5, 1.3]}),
    ("linear_1d", (2, 3, 7), "linear", False, {"size": [12]}),
    ("linear_1d_ac", (2, 3, 7), "linear", True, {"size": [4]}),
    ("trilinear", (1, 2, 3, 4, 5), "trilinear", False, {"size": [5, 3, 8]}),
]
for name, shape, mode, ac, kw in INTERP:
    tr = [2, 3] if name in ("bilinear_up", "bicubic_up", "nearest_up") else None
    base = rand(*shape)
    if tr is not None:
        base = base.transpose(*tr).contiguous()
    args = {"mode": mode, "align_corners": bool(ac)}
    args.update(kw)
    case("interpolate_" + name, "interpolate", args, [(base, tr)],
         lambda x, mode=mode, ac=ac, kw=kw: F.interpolate(x, mode=mode, align_corners=ac, **kw))
case("interpolate_bilinear_f64", "interpolate", {"mode": "bilinear", "align_corners": False, "scale_factor": [1.3, 2.7]},
     [(rand(1, 2, 5, 4, dtype=torch.float64), None)],
     lambda x: F.interpolate(x, mode="bilinear", align_corners=False, scale_factor=[1.3, 2.7]))
case("interpolate_bicubic_f64", "interpolate", {"mode": "bicubic", "align_corners": True, "size": [7, 3]},
     [(rand(1, 1, 4, 6, dtype=torch.float64), None)],
     lambda x: F.interpolate(x, mode="bicubic", align_corners=True, size=[7, 3]))

# masked_fill: broadcast masks, NaN and infinite values, a transposed input.
for name, shape, mshape, value, tr in [
    ("same", (4, 5), (4, 5), -1.5, None),
    ("bcast_row", (3, 4, 5), (5,), 2.0, None),
    ("bcast_col", (3, 4, 5), (4, 1), 0.0, None),
    ("nan", (4, 5), (4, 5), float("nan"), [0, 1]),
    ("inf", (3, 6), (1, 6), float("-inf"), None),
]:
    base = rand(*shape)
    if tr is not None:
        base = base.transpose(*tr).contiguous()
    m = mask(*mshape)
    case("masked_fill_" + name, "masked_fill", {"value": num(value)}, [(base, tr), (m, None)],
         lambda x, m, value=value: x.masked_fill(m.bool(), value))
xnan = rand(4, 5)
xnan[1, 2] = float("nan")
case("masked_fill_nan_input", "masked_fill", {"value": 3.0}, [(xnan, None), (mask(4, 5), None)],
     lambda x, m: x.masked_fill(m.bool(), 3.0))

# masked_select: both operands broadcast; the result is 1-D.
for name, shape, mshape, tr in [
    ("same", (4, 5), (4, 5), None),
    ("bcast_mask", (3, 4, 5), (4, 1), None),
    ("bcast_input", (4, 1), (3, 4, 5), None),
    ("transposed", (4, 5), (4, 5), [0, 1]),
    ("none", (3, 3), (3, 3), None),
]:
    base = rand(*shape)
    if tr is not None:
        base = base.transpose(*tr).contiguous()
    m = mask(*mshape) if name != "none" else torch.zeros(*mshape, dtype=torch.int32)
    # PyTorch 1.13's masked_select backward scatters in the memory order
    # of a non-contiguous input (masked_scatter_ on a zeros_like with its
    # strides), which puts gradients at the wrong positions; the
    # .contiguous() leaves the values alone and gives the true gradient.
    case("masked_select_" + name, "masked_select", {}, [(base, tr), (m, None)],
         lambda x, m: torch.masked_select(x.contiguous(), m.bool()))

# tril / triu: diagonals below, on and above, batches, wide and tall, NaN.
for fn in ("tril", "triu"):
    for name, shape, diag, tr in [
        ("square", (5, 5), 0, None),
        ("wide", (3, 7), 2, None),
        ("tall", (7, 3), -1, None),
        ("batch", (2, 3, 4, 5), 1, [2, 3]),
        ("far", (4, 4), 9, None),
        ("far_neg", (4, 4), -9, None),
    ]:
        base = rand(*shape)
        if tr is not None:
            base = base.transpose(*tr).contiguous()
        if name == "square":
            base[4, 0] = float("nan")
            base[0, 4] = float("inf")
        case(f"{fn}_{name}", fn, {"diagonal": diag}, [(base, tr)],
             lambda x, fn=fn, diag=diag: getattr(torch, fn)(x, diag))

# roll: single and several dims, negative and large shifts, flattened.
for name, shape, shifts, dims, tr in [
    ("one", (5, 7), [2], [1], None),
    ("neg", (5, 7), [-3], [0], None),
    ("two", (3, 4, 5), [1, -7], [0, 2], None),
    ("large", (4, 6), [13], [-1], [0, 1]),
    ("flat", (3, 5), [4], [], None),
    ("flat_neg", (2, 3, 4), [-5], [], [1, 2]),
]:
    base = rand(*shape)
    if tr is not None:
        base = base.transpose(*tr).contiguous()
    case("roll_" + name, "roll", {"shifts": shifts, "dims": dims}, [(base, tr)],
         lambda x, shifts=shifts, dims=dims: torch.roll(x, shifts, dims) if dims else torch.roll(x, shifts))

# flip: one, several and all dims, negative dims, a view.
for name, shape, dims, tr in [
    ("one", (5, 7), [1], None),
    ("two", (3, 4, 5), [0, 2], None),
    ("all", (2, 3, 4), [0, 1, 2], None),
    ("neg", (3, 5), [-1], [0, 1]),
]:
    base = rand(*shape)
    if tr is not None:
        base = base.transpose(*tr).contiguous()
    case("flip_" + name, "flip", {"dims": dims}, [(base, tr)], lambda x, dims=dims: torch.flip(x, dims))
case("flip_int32", "flip", {"dims": [0]}, [(torch.arange(12, dtype=torch.int32).reshape(4, 3), None)],
     lambda x: torch.flip(x, [0]))

with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, "cases": CASES}, f, separators=(",", ":"))
    f.write("\n")
print(f"wrote {len(CASES)} cases to {OUT}")
