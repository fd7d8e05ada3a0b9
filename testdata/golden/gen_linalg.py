#!/usr/bin/python3
"""Writes the PyTorch golden data for webtensor's linalg ops
(tensor.Solve, Inv, Cholesky, QR, SVD, SVDVals, Eigh, EigvalsH and their
gradients in package graph) to testdata/golden/linalg/decomp.json (a
format of its own, so not in testdata/golden/*.json, which tensor/golden_test.go
reads).

Run with Debian's python3-torch (`make golden`, or `/usr/bin/python3
testdata/golden/gen_linalg.py`); no other packages. Inputs come from a
seeded torch.Generator, so the output is deterministic for one PyTorch
version.

    {"torch": VERSION, "cases": [CASE, ...]}

    CASE = {"name", "op", "dtype": "float32"|"float64",
            "args": {"upper": bool, "full": bool, "mode": str},
            "a": TENSOR, "b": TENSOR (Solve only), "transpose_a": bool,
            "outputs": {NAME: TENSOR},   # gauge-fixed, see below
            "loss": {NAME: TENSOR},      # the weights of the loss below
            "grads": {"a": TENSOR [, "b": TENSOR]},  # absent where PyTorch
                                                     # has no gradient
            "error": {"batch": int, "order": int, "message": str}}
    TENSOR = {"shape": [...], "data": [...]}  (row-major float64 values)

Inputs are float64 values already rounded to the case's dtype; outputs
and gradients are computed by PyTorch in float64 from them, so they are
the reference a float32 result is compared with at float32's tolerance.
With "transpose_a", the Go test builds a as the transpose view of a
contiguous tensor holding a's transpose (a non-contiguous input).

QR, SVD and eigenvectors are unique only up to signs, so the outputs are
gauge-fixed: QR with diag(R) >= 0 (columns of Q and rows of R flipped),
the SVD and Eigh with the largest-magnitude entry of each column of U (or
V) positive (the rows of Vh flipped with U's columns). The losses whose
gradients are recorded are gauge-invariant:

    Solve, Inv, Cholesky: sum(G * out)
    QR:    sum(G1 * Q D) + sum(G2 * D R), D = diag(sign(diag R)) held constant
    SVD:   sum(g * S) + sum(G1 * U U^T) + sum(G2 * Vh^T diag(S) Vh)
    SVDVals: sum(g * S)
    Eigh:  sum(g * w) + sum(G * V diag(c) V^T), c = 1..n
    EigvalsH: sum(g * w)
"""

import json
import math
import os
import re

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg", "decomp.json")
GEN = torch.Generator().manual_seed(20261127)
F64 = torch.float64


def rnd(*shape):
    return torch.rand(*shape, generator=GEN, dtype=F64) * 2 - 1


def rounded(x, dtype):
    return x.to(dtype).to(F64)


def enc(t):
    t = t.detach().to(F64).contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def dominant(batch, n):
    a = rnd(*batch, n, n)
    return a + n * torch.eye(n, dtype=F64)


def spd(batch, n):
    x = rnd(*batch, n, n)
    return x.transpose(-1, -2) @ x / n + torch.eye(n, dtype=F64)


def colsign(m):
    """Signs making the largest-magnitude entry of each column positive."""
    idx = m.abs().argmax(dim=-2, keepdim=True)
    s = torch.sign(torch.gather(m, -2, idx))
    s[s == 0] = 1
    return s  # [..., 1, cols]


cases = []


def add(name, op, dtype, a, args=None, b=None, transpose_a=False):
    dt = {"float32": torch.float32, "float64": F64}[dtype]
    a = rounded(a, dt)
    if b is not None:
        b = rounded(b, dt)
    case = {"name": name, "op": op, "dtype": dtype, "args": args or {}, "a": enc(a), "transpose_a": transpose_a}
    if b is not None:
        case["b"] = enc(b)
    A = a.clone().requires_grad_(True)
    B = b.clone().requires_grad_(True) if b is not None else None
    args = args or {}
    loss_w = {}
    if op == "Solve":
        x = torch.linalg.solve(A, B)
        G = rnd(*x.shape)
        loss_w["G"] = G
        loss = (G * x).sum()
        outs = {"x": x}
    elif op == "Inv":
        x = torch.linalg.inv(A)
        G = rnd(*x.shape)
        loss_w["G"] = G
        loss = (G * x).sum()
        outs = {"x": x}
    elif op == "Cholesky":
        x = torch.linalg.cholesky(A, upper=args.get("upper", False))
        G = rnd(*x.shape)
        loss_w["G"] = G
        loss = (G * x).sum()
        outs = {"l": x}
    elif op == "QR":
        q, r = torch.linalg.qr(A, mode=args["mode"])
        k = min(r.shape[-2], r.shape[-1])
        d = torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).detach()
        d[d == 0] = 1
        if r.shape[-2] > k:  # complete with m > n: the extra columns of Q have no sign to fix
            d = torch.cat([d, torch.ones(*d.shape[:-1], r.shape[-2] - k, dtype=F64)], -1)
        qd = q * d.unsqueeze(-2)
        dr = r * d.unsqueeze(-1)
        G1, G2 = rnd(*q.shape), rnd(*r.shape)
        loss_w["G1"], loss_w["G2"] = G1, G2
        loss = (G1 * qd).sum() + (G2 * dr).sum()
        outs = {"q": qd, "r": dr}
    elif op == "SVD":
        u, s, vh = torch.linalg.svd(A, full_matrices=args.get("full", False))
        k = s.shape[-1]
        g, G1, G2 = rnd(*s.shape), rnd(*u.shape[:-1], u.shape[-2]), rnd(*vh.shape[:-2], vh.shape[-1], vh.shape[-1])
        loss_w["g"], loss_w["G1"], loss_w["G2"] = g, G1, G2
        uk, vk = u[..., :, :k], vh[..., :k, :]
        loss = (g * s).sum() + (G1 * (uk @ uk.transpose(-1, -2))).sum() + \
            (G2 * (vk.transpose(-1, -2) @ torch.diag_embed(s) @ vk)).sum()
        sg = colsign(uk)
        outs = {"s": s, "u": uk * sg, "vh": vk * sg.transpose(-1, -2)}
    elif op == "SVDVals":
        s = torch.linalg.svdvals(A)
        g = rnd(*s.shape)
        loss_w["g"] = g
        loss = (g * s).sum()
        outs = {"s": s}
    elif op == "Eigh":
        w, v = torch.linalg.eigh(A, UPLO="U" if args.get("upper") else "L")
        n = w.shape[-1]
        c = torch.arange(1, n + 1, dtype=F64)
        g, G = rnd(*w.shape), rnd(*v.shape)
        loss_w["g"], loss_w["G"] = g, G
        loss = (g * w).sum() + (G * (v @ torch.diag(c) @ v.transpose(-1, -2))).sum()
        outs = {"w": w, "v": v * colsign(v)}
    elif op == "EigvalsH":
        w = torch.linalg.eigvalsh(A, UPLO="U" if args.get("upper") else "L")
        g = rnd(*w.shape)
        loss_w["g"] = g
        loss = (g * w).sum()
        outs = {"w": w}
    else:
        raise ValueError(op)
    case["outputs"] = {k: enc(v) for k, v in outs.items()}
    case["loss"] = {k: enc(v) for k, v in loss_w.items()}
    if op == "QR" and args["mode"] == "complete" and a.shape[-2] > a.shape[-1]:
        cases.append(case)  # PyTorch: not differentiable; no "grads"
        return
    loss.backward()
    case["outputs"] = {k: enc(v) for k, v in outs.items()}
    case["loss"] = {k: enc(v) for k, v in loss_w.items()}
    case["grads"] = {"a": enc(A.grad)}
    if B is not None:
        case["grads"]["b"] = enc(B.grad)
    cases.append(case)


def add_error(name, op, a, args=None):
    case = {"name": name, "op": op, "dtype": "float64", "args": args or {}, "a": enc(a), "transpose_a": False}
    b = None
    if op == "Solve":
        b = torch.ones(*a.shape[:-1], 1, dtype=F64)
        case["b"] = enc(b)
    try:
        if op == "Solve":
            torch.linalg.solve(a, b)
        elif op == "Inv":
            torch.linalg.inv(a)
        elif op == "Cholesky":
            torch.linalg.cholesky(a, upper=(args or {}).get("upper", False))
        raise AssertionError("no error")
    except RuntimeError as e:
        msg = str(e)
    batch = int(re.search(r"Batch element (\d+)", msg).group(1))
    m = re.search(r"order (\d+)", msg)
    case["error"] = {"batch": batch, "order": int(m.group(1)) if m else 0, "message": msg}
    cases.append(case)


for dtype in ("float64", "float32"):
    for batch, n in (((), 1), ((), 5), ((3,), 4), ((2, 1), 3)):
        tag = f"{dtype}/{'x'.join(map(str, batch + (n, n)))}"
        add(f"solve/{tag}", "Solve", dtype, dominant(batch, n), b=rnd(*batch, n, 2))
        add(f"inv/{tag}", "Inv", dtype, dominant(batch, n))
        add(f"cholesky/{tag}", "Cholesky", dtype, spd(batch, n))
        add(f"cholesky-upper/{tag}", "Cholesky", dtype, spd(batch, n), args={"upper": True})
        add(f"eigh/{tag}", "Eigh", dtype, spd(batch, n) + torch.diag(torch.arange(n, dtype=F64)))
        add(f"eigh-upper/{tag}", "Eigh", dtype, rnd(*batch, n, n), args={"upper": True})
        add(f"eigvalsh/{tag}", "EigvalsH", dtype, rnd(*batch, n, n))
    for batch, m, n in (((), 5, 3), ((), 3, 3), ((2,), 4, 2), ((), 1, 1), ((2,), 7, 5)):
        tag = f"{dtype}/{'x'.join(map(str, batch + (m, n)))}"
        add(f"qr-reduced/{tag}", "QR", dtype, rnd(*batch, m, n), args={"mode": "reduced"})
        add(f"qr-complete/{tag}", "QR", dtype, rnd(*batch, m, n), args={"mode": "complete"})
        add(f"svd/{tag}", "SVD", dtype, rnd(*batch, m, n))
        add(f"svd-wide/{tag}", "SVD", dtype, rnd(*batch, n, m))
        add(f"svdvals/{tag}", "SVDVals", dtype, rnd(*batch, m, n))
    # Non-contiguous inputs: a is the transpose view of a contiguous tensor.
    add(f"solve-transposed/{dtype}", "Solve", dtype, dominant((2,), 5), b=rnd(2, 5, 3), transpose_a=True)
    add(f"cholesky-transposed/{dtype}", "Cholesky", dtype, spd((2,), 5), transpose_a=True)
    add(f"svd-transposed/{dtype}", "SVD", dtype, rnd(6, 4), transpose_a=True)
    add(f"qr-transposed/{dtype}", "QR", dtype, rnd(5, 3), args={"mode": "reduced"}, transpose_a=True)
    add(f"eigh-transposed/{dtype}", "Eigh", dtype, spd((), 6), transpose_a=True)

# Wide QR (m < n), appended so the cases above keep their inputs.
for dtype in ("float64", "float32"):
    for batch, m, n in (((), 3, 5), ((2,), 2, 4), ((), 1, 3)):
        tag = f"{dtype}/{'x'.join(map(str, batch + (m, n)))}"
        add(f"qr-reduced/{tag}", "QR", dtype, rnd(*batch, m, n), args={"mode": "reduced"})
        add(f"qr-complete/{tag}", "QR", dtype, rnd(*batch, m, n), args={"mode": "complete"})

good = torch.tensor([[4.0, 1, 0], [1, 3, 0], [0, 0, 2]], dtype=F64)
add_error("cholesky-indefinite", "Cholesky", torch.stack([good, torch.tensor([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]], dtype=F64)]))
add_error("cholesky-indefinite-order3", "Cholesky", torch.stack([torch.tensor([[1.0, 0, 0], [0, 1, 0], [0, 0, -1]], dtype=F64), good]))
singular = torch.tensor([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]], dtype=F64)
add_error("inv-singular", "Inv", torch.stack([good, singular]))
add_error("solve-singular", "Solve", torch.stack([good, singular]))

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, separators=(",", ":"))
    f.write("\n")
print(f"wrote {len(cases)} cases to {OUT}")
