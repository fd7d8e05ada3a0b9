#!/usr/bin/python3
"""Writes the PyTorch golden data for webtensor's sorting and scan ops.

Run with Debian's python3-torch (`make golden`, or `/usr/bin/python3
testdata/golden/gen_sort.py`). It reuses gen.py's encoding (see its
docstring for the format) and writes:

  - testdata/golden/sort.json: sort, argsort, topk, kthvalue, cumsum,
    cumprod and logcumsumexp cases in gen.py's op-case format, which
    tensor/golden_test.go runs on every device (the Go calls are in
    tensor/sort_golden_test.go);
  - testdata/golden/grad_ops/sort.json: their gradients. Each case is
        {"name", "op", "args", "inputs": [INPUT], "grad": OUTPUT,
         "outputs": [OUTPUT]}
    where grad is the upstream gradient g given to the op's (first)
    output and outputs[0] is PyTorch's gradient of the input, computed in
    float64 (graph/sort_golden_test.go checks it).

Inputs are drawn from seeded generators, so the output is deterministic.
Ties are where the op defines their order (stable sorts, kthvalue's first
NaN) and absent where PyTorch leaves it unspecified (unstable sorts,
topk).
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen as G  # noqa: E402  (the shared encoding and helpers)
from gen import F16, F32, F64, I32, INF, NAN, Family, Input, T, U, Q, I, hi, out  # noqa: E402

GEN = torch.Generator().manual_seed(20261127)


def distinct(*shape, dtype=F32):
    """Values without ties: a random permutation of 0.25·k − c."""
    n = 1
    for d in shape:
        n *= d
    p = torch.randperm(n, generator=GEN).to(F64) * 0.25 - n / 8
    return p.reshape(shape).to(dtype)


def with_specials(x, rows):
    """x (2-D) with NaN, ±Inf and ±0 in the given rows."""
    x = x.clone()
    for r in rows:
        x[r, 0] = NAN
        x[r, -1] = INF
        if x.shape[1] > 3:
            x[r, 1] = -INF
            x[r, 2] = -0.0
            x[r, 3] = 0.0
        if x.shape[1] > 5:
            x[r, 5] = NAN
    return x


def add_sort(fam, name, x, dim, descending, stable=True):
    v, i = torch.sort(x.x, dim=dim, descending=descending, stable=stable)
    fam.add(name, "sort", [x], [out(v, x.t.dtype), out(i, I32)], dim=dim, descending=descending, stable=stable)


def add_topk(fam, name, x, k, dim, largest):
    v, i = torch.topk(x.x, k, dim=dim, largest=largest, sorted=True)
    fam.add(name, "topk", [x], [out(v, x.t.dtype), out(i, I32)], k=k, dim=dim, largest=largest, sorted=True)


def add_kth(fam, name, x, k, dim, keepdim):
    v, i = torch.kthvalue(x.x, k, dim=dim, keepdim=keepdim)
    fam.add(name, "kthvalue", [x], [out(v, x.t.dtype), out(i, I32)], k=k, dim=dim, keepdim=keepdim)


SCANS = {"cumsum": torch.cumsum, "cumprod": torch.cumprod, "logcumsumexp": torch.logcumsumexp}


def scan_scale(op, x, dim, y):
    """How much one rounding of each input (and of the result) moves each
    output: sum_{j<=i} |x_j * dy_i/dx_j|, per output. cumsum: the prefix
    sum of |x|; cumprod: (i+1)*|y_i|; logcumsumexp: the softmax weights of
    the prefix times |x|, plus |y_i|."""
    if x.dim() == 0:
        return x.abs()
    if op == "cumsum":
        return torch.cumsum(x.abs(), dim)
    n = x.shape[dim]
    if op == "cumprod":
        count = torch.arange(1, n + 1, dtype=F64).reshape([n if d == dim % x.dim() else 1 for d in range(x.dim())])
        return y.abs() * count
    xl, yl = x.movedim(dim, -1), y.movedim(dim, -1)
    w = torch.exp(xl.unsqueeze(-2) - yl.unsqueeze(-1))  # [..., i, j]
    w = torch.nan_to_num(w * torch.tril(torch.ones(n, n, dtype=F64)), nan=0.0, posinf=0.0)
    s = (w * torch.nan_to_num(xl.abs(), posinf=0.0).unsqueeze(-2)).sum(-1) + torch.nan_to_num(yl.abs(), posinf=0.0)
    return s.movedim(-1, dim)


def add_scan(fam, name, op, x, dim):
    f = SCANS[op]
    if G.is_float(x.t):
        y = f(x.x, dim)
        s = scan_scale(op, x.x, dim, y)
        n = x.t.shape[dim] if x.t.dim() else 1
        fam.add(name, op, [x], [out(y, x.t.dtype, scale=s, n=n)], dim=dim)
    else:
        # Int32 wraps in webtensor (torch promotes to int64): the int64
        # result reduced mod 2^32, which these small inputs never reach.
        y = f(x.x, dim)
        fam.add(name, op, [x], [out(y, I32)], dim=dim)


def gen_forward():
    fam = Family("sort")
    # Sort: ties everywhere (stable), specials, every dim, views, dtypes.
    for desc in (False, True):
        tag = "desc" if desc else "asc"
        add_sort(fam, "sort_7_" + tag, Input(Q(7)), 0, desc)
        add_sort(fam, "sort_3x9_dim1_specials_" + tag, Input(with_specials(Q(3, 9), [0, 2])), 1, desc)
        add_sort(fam, "sort_6x4_dim0_" + tag, Input(Q(6, 4)), 0, desc)
        add_sort(fam, "sort_2x3x5_dim-2_" + tag, Input(Q(2, 3, 5)), -2, desc)
        add_sort(fam, "sort_transposed_" + tag, Input(Q(5, 7), [{"transpose": [0, 1]}]), -1, desc)
        add_sort(fam, "sort_permuted_" + tag, Input(Q(3, 4, 5), [{"permute": [2, 0, 1]}]), 1, desc)
        add_sort(fam, "sort_sliced_" + tag, Input(Q(4, 12), [{"slice": [1, 1, 12, 3]}]), 1, desc)
        add_sort(fam, "sort_1000_" + tag, Input(Q(1000, lo=-50, hi=50)), 0, desc)
        add_sort(fam, "sort_unstable_distinct_" + tag, Input(distinct(4, 33)), 1, desc, stable=False)
        add_sort(fam, "sort_int32_" + tag, Input(I(5, 8, lo=-4, hi=4)), 1, desc)
        add_sort(fam, "sort_float64_" + tag, Input(with_specials(Q(2, 8, dtype=F64), [1])), -1, desc)
        add_sort(fam, "sort_float16_" + tag, Input(with_specials(Q(3, 6, dtype=F16), [0])), 1, desc)
        add_sort(fam, "sort_scalar_" + tag, Input(T(1.5)), 0, desc)
    x = Input(with_specials(Q(3, 9), [1]))
    for desc in (False, True):
        _, i = torch.sort(x.x, dim=1, descending=desc, stable=True)
        fam.add("argsort_3x9_" + ("desc" if desc else "asc"), "argsort", [x], [out(i, I32)], dim=1, descending=desc, stable=True)
    # TopK: distinct values and one NaN per row (PyTorch orders ties as it
    # likes), every k of a short row, both ends, dims.
    t = distinct(3, 6)
    t[1, 2] = NAN
    t[2, 4] = INF
    for k in range(0, 7):
        for largest in (True, False):
            add_topk(fam, "topk_3x6_k%d_%s" % (k, "largest" if largest else "smallest"), Input(t), k, 1, largest)
    add_topk(fam, "topk_dim0_transposed", Input(distinct(7, 4), [{"transpose": [0, 1]}]), 3, 0, True)
    add_topk(fam, "topk_1000", Input(distinct(1000)), 10, 0, True)
    add_topk(fam, "topk_int32", Input(torch.randperm(36, generator=GEN).reshape(4, 9).to(I32)), 4, -1, False)
    add_topk(fam, "topk_float64", Input(distinct(2, 7, dtype=F64)), 2, 1, True)
    # KthValue: distinct values and NaNs (the first NaN counts).
    kt = distinct(4, 5)
    kt[0, 3] = NAN
    kt[2, 1] = NAN
    kt[2, 4] = NAN
    for k in range(1, 6):
        for keep in (False, True):
            add_kth(fam, "kthvalue_4x5_k%d%s" % (k, "_keep" if keep else ""), Input(kt), k, 1, keep)
    add_kth(fam, "kthvalue_dim0", Input(distinct(6, 3)), 4, 0, False)
    add_kth(fam, "kthvalue_int32", Input(torch.randperm(20, generator=GEN).reshape(2, 10).to(I32)), 3, 1, True)
    # Scans.
    for op in ("cumsum", "cumprod", "logcumsumexp"):
        if op == "cumprod":
            g = lambda *s, dtype=F32: G.signed(U(*s, lo=0.6, hi=1.5, dtype=dtype))  # noqa: E731
        elif op == "logcumsumexp":
            g = lambda *s, dtype=F32: U(*s, lo=-4, hi=4, dtype=dtype)  # noqa: E731
        else:
            g = lambda *s, dtype=F32: U(*s, dtype=dtype)  # noqa: E731
        add_scan(fam, op + "_7", op, Input(g(7)), 0)
        add_scan(fam, op + "_3x40_dim1", op, Input(g(3, 40)), 1)
        add_scan(fam, op + "_40x3_dim0", op, Input(g(40, 3)), 0)
        add_scan(fam, op + "_2x3x5_dim-2", op, Input(g(2, 3, 5)), -2)
        add_scan(fam, op + "_transposed", op, Input(g(5, 9), [{"transpose": [0, 1]}]), 1)
        add_scan(fam, op + "_sliced", op, Input(g(3, 20), [{"slice": [1, 0, 20, 3]}]), 1)
        add_scan(fam, op + "_scalar", op, Input(g()), 0)
        add_scan(fam, op + "_float64", op, Input(g(3, 33, dtype=F64)), 1)
        add_scan(fam, op + "_float16", op, Input(g(2, 17, dtype=F16)), 1)
        add_scan(fam, op + "_specials", op, Input(T([[1, NAN, 2, 3], [INF, 1, -INF, 2], [-INF, -INF, 0.5, 1], [2, 0, INF, 1]])), 1)
    add_scan(fam, "cumsum_1025", "cumsum", Input(U(1025)), 0)
    add_scan(fam, "cumsum_2x3000", "cumsum", Input(U(2, 3000)), 1)
    add_scan(fam, "cumprod_zeros", "cumprod", Input(T([[2, 0, 3, 0, 5], [0.5, 1.5, -2, 0, 4]])), 1)
    add_scan(fam, "logcumsumexp_large", "logcumsumexp", Input(U(3, 50, lo=990, hi=1000)), 1)
    add_scan(fam, "logcumsumexp_neg_inf_rows", "logcumsumexp", Input(T([[-INF, -INF, -INF], [-INF, -INF, 0], [INF, 0, -INF]])), 1)
    for op, g in (("cumsum", lambda *s: I(*s, lo=-100, hi=100)), ("cumprod", lambda *s: I(*s, lo=-2, hi=3))):
        add_scan(fam, op + "_int32", op, Input(g(3, 12)), 1)
    # Errors: a dim out of range.
    fam.add("sort_dim_out_of_range", "sort", [Input(U(2, 3))], error="any", dim=2, descending=False, stable=True)
    fam.add("topk_k_out_of_range", "topk", [Input(U(2, 3))], error="any", k=4, dim=1, largest=True, sorted=True)
    fam.add("kthvalue_k_zero", "kthvalue", [Input(U(2, 3))], error="any", k=0, dim=1, keepdim=False)
    fam.add("cumsum_dim_out_of_range", "cumsum", [Input(U(2, 3))], error="any", dim=-3)
    fam.add("logcumsumexp_int32", "logcumsumexp", [Input(I(2, 3))], error="unsupported", dim=1)
    return fam


class GradFamily(Family):
    def write(self):
        d = os.path.join(G.OUT_DIR, "grad_ops")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, self.name + ".json")
        with open(path, "w") as f:
            f.write('{"family":%s,"torch":%s,"cases":[\n' % (json.dumps(self.name), json.dumps(torch.__version__)))
            f.write(",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in self.cases))
            f.write("\n]}\n")
        return path, len(self.cases), os.path.getsize(path)


def add_grad(fam, name, op, x, fn, **args):
    """PyTorch's float64 gradient of fn(x) (its first output) under a
    random upstream gradient."""
    xx = hi(x.t).detach().clone().requires_grad_(True)
    y = fn(xx)
    g = U(*y.shape, dtype=F64)
    (gx,) = torch.autograd.grad(y, [xx], grad_outputs=[g])
    c = {"name": name, "op": op, "args": args, "inputs": [x.record()], "grad": out(g, F64), "outputs": [out(gx, F64)]}
    fam.names.add(name)
    fam.cases.append(c)


def gen_grads():
    fam = GradFamily("sort")
    x = Input(distinct(3, 7, dtype=F64))
    add_grad(fam, "sort_dim1", "sort", x, lambda t: torch.sort(t, dim=1, descending=False, stable=True)[0], dim=1, descending=False)
    add_grad(fam, "sort_dim0_desc", "sort", x, lambda t: torch.sort(t, dim=0, descending=True, stable=True)[0], dim=0, descending=True)
    add_grad(fam, "topk", "topk", x, lambda t: torch.topk(t, 3, 1, True, True)[0], k=3, dim=1, largest=True)
    add_grad(fam, "topk_smallest_dim0", "topk", x, lambda t: torch.topk(t, 2, 0, False, True)[0], k=2, dim=0, largest=False)
    add_grad(fam, "kthvalue", "kthvalue", x, lambda t: torch.kthvalue(t, 4, 1, False)[0], k=4, dim=1, keepdim=False)
    add_grad(fam, "kthvalue_keep_dim0", "kthvalue", x, lambda t: torch.kthvalue(t, 2, 0, True)[0], k=2, dim=0, keepdim=True)
    s = Input(U(4, 9, dtype=F64))
    add_grad(fam, "cumsum", "cumsum", s, lambda t: torch.cumsum(t, 1), dim=1)
    add_grad(fam, "cumsum_dim0", "cumsum", s, lambda t: torch.cumsum(t, 0), dim=0)
    p = Input(G.signed(U(3, 8, lo=0.6, hi=1.5, dtype=F64)))
    add_grad(fam, "cumprod", "cumprod", p, lambda t: torch.cumprod(t, 1), dim=1)
    z = Input(T([[2, 0, 3, 0, 5, 1.5], [0, 1.5, -2, 0.5, 4, 2], [0.5, 1.5, -2, 3, 0, 0.25], [1, 2, 0, 0, 0, 3]], F64))
    add_grad(fam, "cumprod_zeros", "cumprod", z, lambda t: torch.cumprod(t, 1), dim=1)
    add_grad(fam, "cumprod_zeros_dim0", "cumprod", z, lambda t: torch.cumprod(t, 0), dim=0)
    l = Input(U(3, 9, lo=-4, hi=4, dtype=F64))
    add_grad(fam, "logcumsumexp", "logcumsumexp", l, lambda t: torch.logcumsumexp(t, 1), dim=1)
    add_grad(fam, "logcumsumexp_dim0", "logcumsumexp", l, lambda t: torch.logcumsumexp(t, 0), dim=0)
    add_grad(fam, "logcumsumexp_large", "logcumsumexp", Input(U(2, 6, lo=700, hi=800, dtype=F64)),
             lambda t: torch.logcumsumexp(t, 1), dim=1)
    return fam


def main():
    if not torch.__version__.startswith("1.13"):
        print("gen_sort.py: warning: written for PyTorch 1.13 (Debian python3-torch), running %s" % torch.__version__, file=sys.stderr)
    torch.set_num_threads(1)
    for gen in (gen_forward, gen_grads):
        path, n, size = gen().write()
        print("%-40s %4d cases %8d bytes" % (os.path.relpath(path), n, size))


if __name__ == "__main__":
    main()
