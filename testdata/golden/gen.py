#!/usr/bin/python3
"""Writes the PyTorch golden data for webtensor's tensor ops.

Run with Debian's python3-torch (`make golden`, or `/usr/bin/python3
testdata/golden/gen.py`). No other packages are needed (no numpy). The
output is deterministic for a given PyTorch version: all random inputs come
from seeded torch.Generators, drawn in a fixed order.

Each family is written to testdata/golden/<family>.json (the golden
gradients of composite graphs for the graph package go to
testdata/golden/autograd/, in a format of their own: see "autograd" below;
`gen.py autograd` writes only those):

    {"family": F, "torch": VERSION, "cases": [CASE, ...]}

    CASE = {"name": unique within the file,
            "op": the op's name (the Go table in tensor/golden_test.go maps it to a call),
            "args": {op arguments},
            "inputs": [INPUT or null, ...],          # null = argument left out (nil)
            "outputs": [OUTPUT, ...]  or  "error": "unsupported" | "any"}

    INPUT  = {"dtype", "shape", "data"               # a contiguous base tensor
              [, "view": [VIEW, ...], "contiguous": bool]}
    VIEW   = {"transpose": [d0, d1]} | {"permute": [...]} |
             {"slice": [dim, start, end, step]} | {"expand": [...]}
             applied in order to the base tensor; "contiguous" is PyTorch's
             is_contiguous() of the result.
    OUTPUT = {"dtype", "shape", "data" [, "scale": [...] or number, "n": int]}

Floats are written as the exact double value of the stored number (the repr
of a float32 converted to double, which Go parses back exactly); NaN and
infinities are the strings "nan", "inf" and "-inf". Int32 data are JSON
integers (PyTorch's bool and int64 results are converted to int32).

Expected float results are computed in float64 from the (float32/float16)
inputs and rounded once to the output dtype, so they are the correctly
rounded answer, not PyTorch's float32 approximation of it.

"scale" and "n" feed the tolerance (see tensor/golden_test.go): for
elementwise ops scale = sum_j |x_j * df/dx_j| (how much one rounding of the
arguments moves the result); for accumulating ops it is the same op applied
to absolute values (sum |x|, |A|.|B|, conv(|x|, |w|) + |b|, ...) and n is the
number of terms accumulated per output. Scales are rounded to 3 digits.
"""

import json
import math
import os
import sys
import warnings

import torch
import torch.nn.functional as F

OUT_DIR = os.path.dirname(os.path.abspath(__file__))

torch.manual_seed(0)
GEN = torch.Generator().manual_seed(20240603)

F16, F32, F64, I32 = torch.float16, torch.float32, torch.float64, torch.int32
DTYPE_NAME = {F16: "float16", F32: "float32", F64: "float64", I32: "int32", torch.int64: "int32", torch.bool: "int32"}
NAME_DTYPE = {"float16": F16, "float32": F32, "float64": F64, "int32": I32}
INF = float("inf")
NAN = float("nan")


# ---------------------------------------------------------------- data

def U(*shape, lo=-2.0, hi=2.0, dtype=F32):
    """Uniform in [lo, hi), rounded to dtype."""
    return (torch.rand(tuple(shape), generator=GEN, dtype=F64) * (hi - lo) + lo).to(dtype)


def N(*shape, mean=0.0, std=1.0, dtype=F32):
    return (torch.randn(tuple(shape), generator=GEN, dtype=F64) * std + mean).to(dtype)


def Q(*shape, lo=-2.0, hi=2.0, step=0.5, dtype=F32):
    """Multiples of step in [lo, hi]: many ties and equal pairs."""
    k = int(round((hi - lo) / step))
    return (torch.randint(0, k + 1, shape, generator=GEN, dtype=torch.int64).to(F64) * step + lo).to(dtype)


def I(*shape, lo=-10, hi=10):
    """Int32 in [lo, hi)."""
    return torch.randint(lo, hi, shape, generator=GEN, dtype=torch.int64).to(I32)


def T(values, dtype=F32):
    return torch.tensor(values, dtype=F64).to(dtype)


def signed(x):
    """Random signs on positive values."""
    s = torch.randint(0, 2, x.shape, generator=GEN).to(x.dtype) * 2 - 1
    return x * s


def is_float(t):
    return t.dtype in (F16, F32, F64)


def hi(t):
    """The float64 (or int64) version of t for computing references."""
    return t.to(F64) if is_float(t) else t.to(torch.int64)


# ------------------------------------------------------------- encoding

def enc_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def enc(t):
    t = t.contiguous().reshape(-1)
    if is_float(t):
        return [enc_float(v) for v in t.to(F64).tolist()]
    return [int(v) for v in t.to(torch.int64).tolist()]


def round3(v):
    if not math.isfinite(v) or v == 0:
        return 0
    r = float("%.3g" % v)
    return int(r) if r == int(r) and abs(r) < 1e15 else r


def enc_scale(s):
    if not torch.is_tensor(s):
        s = torch.tensor(float(s), dtype=F64)
    s = torch.nan_to_num(s.to(F64).abs(), nan=0.0, posinf=0.0, neginf=0.0).reshape(-1)
    vals = [round3(v) for v in s.tolist()]
    if not any(vals):
        return None
    if all(v == vals[0] for v in vals):
        return vals[0]
    return vals


class Input:
    def __init__(self, base, views=()):
        self.base = base
        self.views = list(views)
        t = base
        for v in self.views:
            t = apply_view(t, v)
        self.t = t  # the viewed tensor, in its own dtype
        self.x = hi(t)  # float64 / int64 version

    def record(self):
        r = {"dtype": DTYPE_NAME[self.base.dtype], "shape": list(self.base.shape), "data": enc(self.base)}
        if self.views:
            r["view"] = self.views
            r["contiguous"] = bool(self.t.is_contiguous())
        return r


def apply_view(t, v):
    (kind, a), = v.items()
    if kind == "transpose":
        return t.transpose(a[0], a[1])
    if kind == "permute":
        return t.permute(*a)
    if kind == "expand":
        return t.expand(*a)
    if kind == "slice":
        dim, start, end, step = a
        idx = [slice(None)] * t.dim()
        idx[dim] = slice(start, end, step)
        return t[tuple(idx)]
    raise ValueError(v)


def out(t, dtype=None, scale=None, n=None):
    """An expected output: t (float64/int64/bool) rounded to dtype."""
    if dtype is None:
        dtype = t.dtype if t.dtype in (F16, F32, F64) else I32
    if isinstance(dtype, str):
        dtype = NAME_DTYPE[dtype]
    if dtype == I32:
        v = t.to(torch.int64)
        assert v.numel() == 0 or (v.min() >= -2 ** 31 and v.max() < 2 ** 31), "int32 overflow"
    else:
        v = t.to(dtype)
    r = {"dtype": DTYPE_NAME[dtype], "shape": list(t.shape), "data": enc(v)}
    if scale is not None and dtype != I32:
        s = enc_scale(scale)
        if s is not None:
            r["scale"] = s
    if n is not None:
        r["n"] = int(n)
    return r


class Family:
    def __init__(self, name):
        self.name = name
        self.cases = []
        self.names = set()

    def add(self, name, op, inputs, outputs=None, error=None, **args):
        assert name not in self.names, name
        self.names.add(name)
        c = {"name": name, "op": op}
        if args:
            c["args"] = args
        c["inputs"] = [None if i is None else i.record() for i in inputs]
        if error is not None:
            c["error"] = error
        else:
            c["outputs"] = outputs
        self.cases.append(c)

    def write(self):
        path = os.path.join(OUT_DIR, self.name + ".json")
        with open(path, "w") as f:
            f.write('{"family":%s,"torch":%s,"cases":[\n' % (json.dumps(self.name), json.dumps(torch.__version__)))
            f.write(",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in self.cases))
            f.write("\n]}\n")
        return path, len(self.cases), os.path.getsize(path)


def sensitivity(f, *xs):
    """sum_j |x_j * df/dx_j| elementwise, in float64, inputs broadcast to the output."""
    xs = torch.broadcast_tensors(*[x.to(F64) for x in xs])
    xs = [x.detach().clone().requires_grad_(True) for x in xs]
    y = f(*xs)
    if y.numel() == 0:
        return torch.zeros(y.shape, dtype=F64)
    gs = torch.autograd.grad(y.sum(), xs, allow_unused=True)
    s = torch.zeros(y.shape, dtype=F64)
    for x, g in zip(xs, gs):
        if g is not None:
            s = s + torch.nan_to_num((x.detach() * g).abs(), nan=0.0, posinf=0.0, neginf=0.0)
    return s


def scalar_as(s, dtype):
    """A Go scalar argument (float64) as the tensor's dtype, as webtensor does."""
    if dtype == I32:
        return float(int(s))
    return torch.tensor(s, dtype=F64).to(dtype).to(F64).item()


# ============================================================ elementwise

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": torch.pow,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def binary_inputs(op, shape_a, shape_b, dtype=F32):
    if dtype == I32:
        return I(*shape_a, lo=-20, hi=20), I(*shape_b, lo=-20, hi=20)
    if op in COMPARISONS or op in ("maximum", "minimum"):
        return Q(*shape_a, dtype=dtype), Q(*shape_b, dtype=dtype)
    if op == "pow":
        return U(*shape_a, lo=0.1, hi=3.0, dtype=dtype), U(*shape_b, lo=-2.0, hi=2.0, dtype=dtype)
    if op == "div":
        return U(*shape_a, dtype=dtype), signed(U(*shape_b, lo=0.25, hi=2.0, dtype=dtype))
    return U(*shape_a, dtype=dtype), U(*shape_b, dtype=dtype)


def add_binary(fam, name, op, a, b, out_dtype=None):
    f = BINARY[op]
    y = f(a.x, b.x)
    if op in COMPARISONS:
        fam.add(name, op, [a, b], [out(y, I32)])
        return
    if out_dtype is None:
        out_dtype = a.t.dtype
        if out_dtype == I32 and op == "div":
            out_dtype = F32
    scale = sensitivity(f, a.x, b.x) if is_float(y) else None
    fam.add(name, op, [a, b], [out(y, out_dtype, scale=scale)])


def add_binary_scalar(fam, name, op, a, s, out_dtype=None):
    f = BINARY[op]
    sv = scalar_as(s, a.t.dtype)
    if a.t.dtype == I32 and op != "div":
        y = f(a.x, torch.tensor(int(sv), dtype=torch.int64))
    else:
        y = f(a.x.to(F64), torch.tensor(sv, dtype=F64))
    if op in COMPARISONS:
        fam.add(name, op + "_scalar", [a], [out(y, I32)], scalar=s)
        return
    if out_dtype is None:
        out_dtype = a.t.dtype if not (a.t.dtype == I32 and op == "div") else F32
    scale = sensitivity(lambda x: f(x, torch.tensor(sv, dtype=F64)), a.x) if is_float(y) else None
    fam.add(name, op + "_scalar", [a], [out(y, out_dtype, scale=scale)], scalar=s)


def gen_elementwise():
    fam = Family("elementwise")
    scalars = {"add": 0.75, "sub": -1.25, "mul": 0.1, "div": 3.0, "pow": 2.0, "maximum": 0.5, "minimum": -0.5,
               "eq": 0.5, "ne": 0.5, "lt": 0.5, "le": 0.5, "gt": 0.5, "ge": 0.5}
    for op in BINARY:
        a, b = binary_inputs(op, (7, 5), (7, 5))
        add_binary(fam, op + "_7x5", op, Input(a), Input(b))
        a, b = binary_inputs(op, (3, 1, 5), (4, 1))
        add_binary(fam, op + "_bcast_3x1x5_4x1", op, Input(a), Input(b))
        a, _ = binary_inputs(op, (7, 5), (1,))
        add_binary_scalar(fam, op + "_scalar_7x5", op, Input(a), scalars[op])
        if op != "pow":
            a, b = binary_inputs(op, (7, 5), (7, 5), dtype=I32)
            add_binary(fam, op + "_int32_7x5", op, Input(a), Input(b) if op != "div" else Input(signed(I(7, 5, lo=1, hi=9))))
            add_binary_scalar(fam, op + "_scalar_int32_7x5", op, Input(a), {"div": 4.0, "mul": -2.0}.get(op, 3.0))
    # Int32 pow is unsupported on every backend.
    fam.add("pow_int32_unsupported", "pow", [Input(I(3, lo=0, hi=4)), Input(I(3, lo=0, hi=3))], error="unsupported")
    fam.add("pow_scalar_int32_unsupported", "pow_scalar", [Input(I(3, lo=0, hi=4))], error="unsupported", scalar=2.0)

    # Int32 beyond 2^24, where a detour through float32 would round.
    big_a = T([16777217, 2147483647, -2147483648, 5, -16777219, 123456789], I32)
    big_b = T([16777216, 2147483646, -2147483647, 5, -16777218, 123456788], I32)
    for op in ("eq", "ne", "lt", "ge", "maximum", "minimum"):
        add_binary(fam, op + "_int32_large", op, Input(big_a), Input(big_b))
    add_binary(fam, "add_int32_large", "add", Input(T([16777217, 2147483600, -2147483600, 123456789], I32)),
               Input(T([1, 47, -48, -2], I32)))
    add_binary(fam, "sub_int32_large", "sub", Input(T([16777217, 2147483647, -2147483600], I32)), Input(T([-2, 7, 48], I32)))
    add_binary(fam, "mul_int32_large", "mul", Input(T([16777217, 46340, -65537, 3], I32)), Input(T([3, 46340, 32767, -715827882], I32)))
    add_binary_scalar(fam, "add_scalar_int32_large", "add", Input(T([16777217, -16777217, 2147483000], I32)), 3.0)

    # Broadcasting corner cases.
    for op in ("add", "sub", "div", "lt", "maximum"):
        for tag, sa, sb in [("size1_both", (3, 1, 5), (1, 4, 1)),
                            ("rank_mismatch", (2, 3, 4), (4,)),
                            ("rank_mismatch_rev", (5,), (2, 1, 1, 5)),
                            ("rank0_left", (), (3, 3)),
                            ("rank0_right", (3, 3), ()),
                            ("zero_rows", (0, 3), (1, 3)),
                            ("zero_middle", (2, 0, 4), (4,)),
                            ("zero_bcast", (3, 1), (1, 0))]:
            a, b = binary_inputs(op, sa, sb)
            add_binary(fam, "%s_bcast_%s" % (op, tag), op, Input(a), Input(b))
    # Non-contiguous operands.
    for op in ("add", "mul", "sub", "div", "ge", "minimum", "pow"):
        a, b = binary_inputs(op, (5, 7), (7, 5))
        add_binary(fam, op + "_transposed", op, Input(a, [{"transpose": [0, 1]}]), Input(b))
        a, b = binary_inputs(op, (7, 10), (9, 5))
        add_binary(fam, op + "_sliced_steps", op, Input(a, [{"slice": [1, 1, 10, 2]}]),
                   Input(b, [{"slice": [0, -7, 9, 1]}]))
        a, b = binary_inputs(op, (7, 1), (1, 5))
        add_binary(fam, op + "_expanded", op, Input(a, [{"expand": [7, 5]}]), Input(b, [{"expand": [7, 5]}]))
    a, b = binary_inputs("add", (2, 3, 4), (4, 3, 2))
    add_binary(fam, "add_permuted_both", "add", Input(a, [{"permute": [2, 0, 1]}]), Input(b, [{"permute": [0, 2, 1]}]))
    # Odd and larger sizes.
    for op in ("add",):
        a, b = binary_inputs(op, (1025,), (1025,))
        add_binary(fam, op + "_1025", op, Input(a), Input(b))
    a, b = binary_inputs("mul", (1000,), (1,))
    add_binary(fam, "mul_1000_by_1", "mul", Input(a), Input(b))
    a, b = binary_inputs("sub", (1,), (1,))
    add_binary(fam, "sub_1", "sub", Input(a), Input(b))
    # Special values.
    add_binary(fam, "div_special", "div", Input(T([1, -1, 0, 2, INF, -INF, NAN, 3, -0.0])),
               Input(T([0, 0, 0, INF, INF, 2, 1, -0.0, 5])))
    add_binary(fam, "add_special", "add", Input(T([INF, INF, -INF, NAN, 1, 3e38])), Input(T([-INF, 1, -INF, 1, NAN, 3e38])))
    add_binary(fam, "mul_special", "mul", Input(T([INF, 0, -INF, NAN, -2])), Input(T([0, -3, -2, 0, 0])))
    for op in ("maximum", "minimum"):
        add_binary(fam, op + "_nan", op, Input(T([NAN, 1, 2, -INF, 0, NAN])), Input(T([1, NAN, 3, INF, 5, NAN])))
    for op in sorted(COMPARISONS):
        add_binary(fam, op + "_special", op, Input(T([NAN, 1, INF, -INF, 0, NAN, INF])),
                   Input(T([NAN, NAN, INF, 1, -0.0, 0, -INF])))
    add_binary(fam, "pow_special", "pow", Input(T([-2, -2, 0, 0, 2, -8, 4, 1, NAN, 2, -2, 0, -3])),
               Input(T([3, 0.5, 0, -1, -1, 1 / 3, -0.5, NAN, 0, INF, -3, 0.5, 2])))
    for s in (0.5, -1.0, 3.0):
        base = U(4, 5, lo=0.1, hi=2.0)
        add_binary_scalar(fam, "pow_scalar_%g" % s, "pow", Input(signed(base) if s == 3.0 else base), s)
    # Other dtypes: float64 (CPU), float16 (CPU by conversion; WebGPU only with shader-f16).
    for dt, tag in ((F64, "f64"), (F16, "f16")):
        for op in ("add", "mul", "div", "pow", "maximum", "lt"):
            a, b = binary_inputs(op, (7, 5), (1, 5), dtype=dt)
            add_binary(fam, "%s_%s" % (op, tag), op, Input(a), Input(b))
        a, _ = binary_inputs("mul", (7, 5), (1,), dtype=dt)
        add_binary_scalar(fam, "mul_scalar_" + tag, "mul", Input(a), 0.1)

    # where(cond, a, b)
    def add_where(name, cond, a, b):
        y = torch.where(cond.x != 0, *torch.broadcast_tensors(a.x, b.x))
        fam.add(name, "where", [cond, a, b], [out(y, a.t.dtype)])

    add_where("where_7x5", Input(I(7, 5, lo=-1, hi=3)), Input(U(7, 5)), Input(U(7, 5)))
    add_where("where_bcast_all", Input(I(3, 1, lo=0, hi=2)), Input(U(1, 4)), Input(U()))
    add_where("where_bcast_rank", Input(I(4, lo=0, hi=2)), Input(U(2, 3, 1)), Input(U(3, 4)))
    add_where("where_int32", Input(I(7, 5, lo=0, hi=2)), Input(I(7, 5)), Input(I(5)))
    add_where("where_nan_unselected", Input(T([1, 0, 1, 0], I32)), Input(T([1, NAN, 3, INF])), Input(T([NAN, 2, -INF, 4])))
    add_where("where_noncontig", Input(I(5, 7, lo=0, hi=2), [{"transpose": [0, 1]}]),
              Input(U(7, 10), [{"slice": [1, 0, 10, 2]}]), Input(U(7, 1), [{"expand": [7, 5]}]))
    add_where("where_cond_expanded", Input(I(1, 5, lo=0, hi=2), [{"expand": [4, 5]}]), Input(U(4, 5)), Input(U(4, 5)))
    add_where("where_int32_large", Input(T([1, 0, 1], I32)), Input(T([16777217, 1, 2147483647], I32)),
              Input(T([0, -16777219, 0], I32)))
    add_where("where_zero", Input(I(0, 4, lo=0, hi=2)), Input(U(1, 4)), Input(U(0, 1)))
    add_where("where_259", Input(I(259, lo=0, hi=2)), Input(U(259)), Input(U(259)))
    add_where("where_f64", Input(I(3, 4, lo=0, hi=2)), Input(U(3, 4, dtype=F64)), Input(U(3, 4, dtype=F64)))
    add_where("where_f16", Input(I(3, 4, lo=0, hi=2)), Input(U(3, 4, dtype=F16)), Input(U(3, 4, dtype=F16)))
    return fam


# ================================================================= unary

# References free of the cancellation in x/2*(1 + erf(x/sqrt2)) and x/2*(1 + tanh(u)) for x << 0,
# so that they are accurate to float64 precision (PyTorch's float64 formulas lose ~1e-11 there).
def gelu(x):
    return 0.5 * x * torch.special.erfc(-x * math.sqrt(0.5))


def gelu_tanh(x):
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    return x * torch.sigmoid(2 * u)


UNARY = {
    # name: (f on float64, input generator, args)
    "neg": (torch.neg, lambda s, d: U(*s, dtype=d)),
    "abs": (torch.abs, lambda s, d: U(*s, dtype=d)),
    "sign": (torch.sign, lambda s, d: Q(*s, lo=-2, hi=2, step=0.25, dtype=d)),
    "reciprocal": (torch.reciprocal, lambda s, d: signed(U(*s, lo=0.25, hi=4, dtype=d))),
    "sqrt": (torch.sqrt, lambda s, d: U(*s, lo=0, hi=9, dtype=d)),
    "rsqrt": (torch.rsqrt, lambda s, d: U(*s, lo=0.01, hi=9, dtype=d)),
    "square": (torch.square, lambda s, d: U(*s, lo=-3, hi=3, dtype=d)),
    "exp": (torch.exp, lambda s, d: U(*s, lo=-10, hi=10, dtype=d)),
    "log": (torch.log, lambda s, d: torch.exp(U(*s, lo=-7, hi=7, dtype=F64)).to(d)),
    "log1p": (torch.log1p, lambda s, d: U(*s, lo=-0.9, hi=5, dtype=d)),
    "sin": (torch.sin, lambda s, d: U(*s, lo=-10, hi=10, dtype=d)),
    "cos": (torch.cos, lambda s, d: U(*s, lo=-10, hi=10, dtype=d)),
    "tan": (torch.tan, lambda s, d: U(*s, lo=-1.4, hi=1.4, dtype=d)),
    "tanh": (torch.tanh, lambda s, d: U(*s, lo=-6, hi=6, dtype=d)),
    "sigmoid": (torch.sigmoid, lambda s, d: U(*s, lo=-12, hi=12, dtype=d)),
    "relu": (torch.relu, lambda s, d: U(*s, dtype=d)),
    "gelu": (gelu, lambda s, d: U(*s, lo=-5, hi=5, dtype=d)),
    "gelu_tanh": (gelu_tanh, lambda s, d: U(*s, lo=-5, hi=5, dtype=d)),
    "silu": (F.silu, lambda s, d: U(*s, lo=-8, hi=8, dtype=d)),
    "erf": (torch.erf, lambda s, d: U(*s, lo=-4, hi=4, dtype=d)),
}

UNARY_SPECIAL = {
    "neg": [0, -0.0, INF, -INF, NAN],
    "abs": [-0.0, -INF, INF, NAN],
    "sign": [0, -0.0, INF, -INF, 3e-30],
    "reciprocal": [0, -0.0, INF, -INF, NAN],
    "sqrt": [-1, 0, INF, NAN, -INF],
    "rsqrt": [0, -1, INF, NAN],
    "square": [INF, -INF, NAN, 2e19],
    "exp": [-INF, INF, 100, -200, NAN, 0],
    "log": [0, -1, INF, 1, NAN],
    "log1p": [-1, -2, INF, NAN, 1e-8, -1e-8, 1e-6, 3e-5, 1e-3, -1e-4],
    "sin": [INF, -INF, NAN, 0],
    "cos": [INF, -INF, NAN, 0],
    "tan": [INF, -INF, NAN, 0],
    "tanh": [INF, -INF, 20, -20, NAN, 1e-4],
    "sigmoid": [INF, -INF, 100, -200, NAN, 0],
    "relu": [NAN, -INF, INF, -0.0],
    "erf": [INF, -INF, NAN, 0, -0.0, 1e-30, 0.5, 4, -6],
}


def add_unary(fam, name, op, x, f, **args):
    y = f(x.x)
    out_dt = x.t.dtype
    scale = sensitivity(f, x.x) if is_float(y) else None
    fam.add(name, op, [x], [out(y, out_dt, scale=scale)], **args)


def gen_unary():
    fam = Family("unary")
    x = torch.linspace(-6, 6, 101, dtype=F64)
    assert torch.allclose(gelu(x), F.gelu(x), rtol=1e-9, atol=1e-12)
    assert torch.allclose(gelu_tanh(x), F.gelu(x, approximate="tanh"), rtol=1e-9, atol=1e-12)
    for op, (f, g) in UNARY.items():
        add_unary(fam, op + "_7x13", op, Input(g((7, 13), F32)), f)
        if op in UNARY_SPECIAL:
            add_unary(fam, op + "_special", op, Input(T(UNARY_SPECIAL[op])), f)
    for alpha in (0.01, 0.2):
        add_unary(fam, "leaky_relu_%g" % alpha, "leaky_relu", Input(U(7, 13)), lambda x: F.leaky_relu(x, alpha), alpha=alpha)
    add_unary(fam, "leaky_relu_special", "leaky_relu", Input(T([-INF, INF, NAN, -0.0])), lambda x: F.leaky_relu(x, 0.1), alpha=0.1)
    for alpha in (1.0, 0.5):
        add_unary(fam, "elu_%g" % alpha, "elu", Input(U(7, 13, lo=-6, hi=3)), lambda x: F.elu(x, alpha), alpha=alpha)
    add_unary(fam, "elu_special", "elu", Input(T([-INF, INF, NAN])), lambda x: F.elu(x, 1.5), alpha=1.5)
    for beta, thr, lo, hi_ in ((1.0, 20.0, -30, 30), (2.0, 5.0, -5, 5), (0.5, 1.0, -6, 6)):
        add_unary(fam, "softplus_b%g_t%g" % (beta, thr), "softplus", Input(U(7, 13, lo=lo, hi=hi_)),
                  lambda x: F.softplus(x, beta, thr), beta=beta, threshold=thr)
    add_unary(fam, "softplus_special", "softplus", Input(T([INF, -INF, -100, 50, NAN])),
              lambda x: F.softplus(x, 1.0, 20.0), beta=1.0, threshold=20.0)
    for tag, lo, hi_ in (("both", -0.5, 1.0), ("min_only", 0.0, None), ("max_only", None, 0.25), ("lo_eq_hi", 0.5, 0.5)):
        add_unary(fam, "clamp_" + tag, "clamp", Input(U(7, 13)), lambda x: torch.clamp(x, lo, hi_), min=lo, max=hi_)
    add_unary(fam, "clamp_lo_gt_hi", "clamp", Input(U(3, 5)), lambda x: torch.clamp(x, 1.0, -1.0), min=1.0, max=-1.0)
    add_unary(fam, "clamp_special", "clamp", Input(T([NAN, -INF, INF, 0.3])), lambda x: torch.clamp(x, -1, 1), min=-1, max=1)
    # Int32.
    for op in ("neg", "abs", "sign", "square", "relu"):
        add_unary(fam, op + "_int32", op, Input(I(7, 5, lo=-10, hi=10)), UNARY[op][0])
    add_unary(fam, "clamp_int32", "clamp", Input(I(7, 5, lo=-10, hi=10)), lambda x: torch.clamp(x, -3, 5), min=-3, max=5)
    for op in ("neg", "abs", "square"):
        add_unary(fam, op + "_int32_large", op, Input(T([46340, -46340, 12345, -1, 4097], I32)) if op == "square"
                  else Input(T([16777217, -16777219, 2147483647, -2147483647], I32)), UNARY[op][0])
    add_unary(fam, "clamp_int32_large", "clamp", Input(T([16777217, -16777219, 2147483647, 0], I32)),
              lambda x: torch.clamp(x, -16777218, 16777216), min=-16777218, max=16777216)
    add_unary(fam, "clamp_int32_min_only", "clamp", Input(I(7, 5, lo=-10, hi=10)), lambda x: torch.clamp(x, min=2), min=2, max=None)
    # Other dtypes.
    for op in ("exp", "sin", "tanh", "gelu", "log1p", "sigmoid", "rsqrt"):
        f, g = UNARY[op]
        add_unary(fam, op + "_f64", op, Input(g((7, 5), F64)), f)
    for op in ("exp", "sigmoid", "sqrt", "relu", "gelu_tanh", "neg"):
        f, g = UNARY[op]
        add_unary(fam, op + "_f16", op, Input(g((7, 5), F16)), f)
    add_unary(fam, "softplus_f64", "softplus", Input(U(7, 5, lo=-30, hi=30, dtype=F64)),
              lambda x: F.softplus(x, 1.0, 20.0), beta=1.0, threshold=20.0)
    add_unary(fam, "elu_f16", "elu", Input(U(7, 5, lo=-4, hi=3, dtype=F16)), lambda x: F.elu(x, 1.0), alpha=1.0)
    # Non-contiguous inputs.
    add_unary(fam, "exp_transposed", "exp", Input(U(5, 7, lo=-3, hi=3), [{"transpose": [0, 1]}]), torch.exp)
    add_unary(fam, "sin_sliced_steps", "sin", Input(U(9, 12), [{"slice": [0, 1, 9, 3]}, {"slice": [1, -1, 12, 1]}]), torch.sin)
    add_unary(fam, "tanh_expanded", "tanh", Input(U(1, 6), [{"expand": [4, 6]}]), torch.tanh)
    add_unary(fam, "sqrt_permuted", "sqrt", Input(U(2, 3, 4, lo=0, hi=4), [{"permute": [2, 0, 1]}]), torch.sqrt)
    add_unary(fam, "gelu_sliced", "gelu", Input(U(6, 8, lo=-4, hi=4), [{"slice": [1, 0, 8, 2]}]), gelu)
    add_unary(fam, "neg_int32_transposed", "neg", Input(I(3, 4), [{"transpose": [0, 1]}]), torch.neg)
    # Sizes.
    for op in ("exp", "relu"):
        f, g = UNARY[op]
        add_unary(fam, op + "_1025", op, Input(g((1025,), F32)), f)
    add_unary(fam, "abs_1", "abs", Input(U(1)), torch.abs)
    add_unary(fam, "exp_rank0", "exp", Input(U()), torch.exp)
    add_unary(fam, "exp_zero", "exp", Input(U(0, 5)), torch.exp)
    add_unary(fam, "relu_zero", "relu", Input(U(3, 0)), torch.relu)
    return fam


# ============================================================ reductions

def reduce_scale(op, x, dims, keepdim, y):
    d = dims if dims is not None else list(range(x.dim()))
    n = 1
    for i in d:
        n *= x.shape[i]
    if op in ("sum", "mean"):
        s = x.abs().sum(dim=d, keepdim=keepdim) if x.dim() else x.abs()
        if op == "mean":
            s = s / max(n, 1)
        return s, n
    if op == "prod":
        return y.abs(), n
    if op == "logsumexp":
        m = x.amax(dim=d, keepdim=True) if n else torch.zeros([1] * x.dim(), dtype=F64)
        m = torch.nan_to_num(m, nan=0.0, posinf=0.0, neginf=0.0)
        lse = torch.logsumexp(x, dim=d, keepdim=True)
        p = torch.exp(x - lse)
        w = torch.nan_to_num(p * (x - m).abs(), nan=0.0, posinf=0.0, neginf=0.0).sum(dim=d, keepdim=keepdim)
        return 1 + y.abs() + w, n
    return None, None


def full_dims(x, dims):
    return list(range(x.dim())) if dims is None else dims


def reduce_ref(op, x, dims, keepdim):
    d = full_dims(x, dims)
    if op == "sum":
        return torch.sum(x, dim=d, keepdim=keepdim) if d else x.clone()
    if op == "mean":
        return torch.mean(x, dim=d, keepdim=keepdim) if d else x.clone()
    if op == "logsumexp":
        return torch.logsumexp(x, dim=d, keepdim=keepdim)
    if op == "prod":
        y = x
        for i in sorted([i % x.dim() for i in d], reverse=True):
            y = torch.prod(y, dim=i, keepdim=True)
        if not keepdim:
            for i in sorted([i % x.dim() for i in d], reverse=True):
                y = y.squeeze(i)
        return y
    if op in ("max", "min"):
        return (torch.amax if op == "max" else torch.amin)(x, dim=d, keepdim=keepdim)
    raise ValueError(op)


def add_reduce(fam, name, op, x, dims, keepdim, out_dtype=None):
    y = reduce_ref(op, x.x, dims, keepdim)
    if out_dtype is None:
        out_dtype = x.t.dtype
    s, n = reduce_scale(op, x.x, dims, keepdim, y) if is_float(y) else (None, None)
    fam.add(name, op, [x], [out(y, out_dtype, scale=s, n=n)], dims=dims, keepdim=keepdim)


def var_ref(x, dims, correction, keepdim, std):
    d = full_dims(x, dims)
    n = 1
    for i in d:
        n *= x.shape[i]
    m = x.mean(dim=d, keepdim=True)
    dev = x - m
    ss = (dev * dev).sum(dim=d, keepdim=keepdim)
    v = ss / (n - correction) if n - correction != 0 else ss / 0.0
    scale = ((dev * dev).sum(dim=d, keepdim=keepdim) + 2 * (dev.abs() * x.abs()).sum(dim=d, keepdim=keepdim)) / max(n - correction, 1)
    if std:
        y = torch.sqrt(v)
        scale = scale / (2 * y)
        return y, scale, n
    return v, scale, n


def add_var(fam, name, op, x, dims, correction, keepdim):
    y, s, n = var_ref(x.x, dims, correction, keepdim, op == "std")
    fam.add(name, op, [x], [out(y, x.t.dtype, scale=s, n=n)], dims=dims, correction=correction, keepdim=keepdim)


def add_arg(fam, name, op, x, dim, keepdim):
    if dim is None:
        y = (torch.argmax if op == "argmax" else torch.argmin)(x.x.reshape(-1))
        if keepdim:
            y = y.reshape([1] * x.x.dim())
    else:
        y = (torch.argmax if op == "argmax" else torch.argmin)(x.x, dim=dim, keepdim=keepdim)
    fam.add(name, op, [x], [out(y, I32)], dim=dim, keepdim=keepdim)


def gen_reductions():
    fam = Family("reductions")
    dimsets = [([0], False), ([-1], False), ([1], True), ([0, 2], False), ([2, 0], True), ([-1, -2], False),
               ([0, 1, 2], False), (None, False), (None, True)]
    gens = {"sum": lambda *s: U(*s), "mean": lambda *s: U(*s), "max": lambda *s: U(*s), "min": lambda *s: U(*s),
            "prod": lambda *s: signed(U(*s, lo=0.6, hi=1.5)), "logsumexp": lambda *s: U(*s, lo=-4, hi=4)}
    for op, g in gens.items():
        for dims, keep in dimsets:
            tag = "all" if dims is None else "_".join(str(d) for d in dims)
            add_reduce(fam, "%s_3x4x5_dims_%s%s" % (op, tag, "_keep" if keep else ""), op, Input(g(3, 4, 5)), dims, keep)
        if op in ("sum", "max", "prod", "logsumexp"):
            add_reduce(fam, op + "_1025", op, Input(g(1025)), [0], False)
        else:
            add_reduce(fam, op + "_257", op, Input(g(257)), [0], False)
        if op == "mean":
            add_reduce(fam, op + "_1000x2_dim0", op, Input(g(1000, 2)), [0], True)
        add_reduce(fam, op + "_transposed", op, Input(g(5, 7), [{"transpose": [0, 1]}]), [1], False)
        add_reduce(fam, op + "_sliced_steps", op, Input(g(6, 9), [{"slice": [1, 0, 9, 2]}]), [0], False)
        add_reduce(fam, op + "_expanded", op, Input(g(4, 1), [{"expand": [4, 6]}]), [1], False)
        add_reduce(fam, op + "_permuted", op, Input(g(2, 3, 4), [{"permute": [1, 2, 0]}]), [0, 2], True)
        add_reduce(fam, op + "_rank0", op, Input(g()), None, False)
        add_reduce(fam, op + "_size1_axis", op, Input(g(3, 1, 2)), [1], False)
    add_reduce(fam, "sum_2053", "sum", Input(U(2053)), None, False)
    add_reduce(fam, "mean_33x31_all", "mean", Input(U(33, 31, lo=-1, hi=3)), None, False)
    add_reduce(fam, "logsumexp_large_values", "logsumexp", Input(U(3, 7, lo=990, hi=1000)), [1], False)
    add_reduce(fam, "logsumexp_neg_inf", "logsumexp", Input(T([[-INF, -INF, -INF], [-INF, 0, 1], [INF, 0, 1]])), [1], False)
    add_reduce(fam, "max_nan", "max", Input(T([[1, NAN, 3], [INF, 2, -INF]])), [1], False)
    add_reduce(fam, "min_nan", "min", Input(T([[1, NAN, 3], [INF, 2, -INF]])), [1], False)
    add_reduce(fam, "sum_inf", "sum", Input(T([[1, INF, 3], [INF, -INF, 0]])), [1], False)
    # Zero-size.
    for op in ("sum", "mean", "prod", "logsumexp"):
        add_reduce(fam, op + "_empty_axis", op, Input(U(2, 0)), [1], False)
        add_reduce(fam, op + "_empty_kept_axis", op, Input(U(0, 3)), [1], True)
    for op in ("max", "min"):
        fam.add(op + "_empty_axis_error", op, [Input(U(2, 0))], error="any", dims=[1], keepdim=False)
    # Int32.
    for op in ("sum", "max", "min", "prod"):
        g = (lambda *s: I(*s, lo=-3, hi=4)) if op == "prod" else (lambda *s: I(*s, lo=-100, hi=100))
        add_reduce(fam, op + "_int32_dims_1", op, Input(g(3, 4, 5)), [1], False)
        add_reduce(fam, op + "_int32_all", op, Input(g(2, 5)), None, False)
    add_reduce(fam, "sum_int32_large", "sum", Input(T([[16777217, 1, 1], [2147483000, 600, 47], [-2147483000, -648, 0]], I32)), [1], False)
    add_reduce(fam, "max_int32_large", "max", Input(T([[16777217, 16777216], [-2147483648, -2147483647]], I32)), [1], False)
    add_reduce(fam, "min_int32_large", "min", Input(T([[16777217, 16777218], [2147483647, 2147483646]], I32)), [1], False)
    add_arg(fam, "argmax_int32_large", "argmax", Input(T([[16777216, 16777217, 16777216], [7, 2147483647, 2147483646]], I32)), 1, False)
    add_arg(fam, "argmin_int32_large", "argmin", Input(T([[16777217, 16777216, 16777217], [-2147483647, 0, -2147483648]], I32)), 1, False)
    # float64 / float16.
    for op in ("sum", "mean", "max", "logsumexp", "prod"):
        add_reduce(fam, op + "_f64", op, Input(gens[op](4, 6).to(F64)), [1], False)
    for op in ("sum", "max", "mean"):
        add_reduce(fam, op + "_f16", op, Input(gens[op](4, 6).to(F16)), [1], False)

    # argmax / argmin.
    for op in ("argmax", "argmin"):
        add_arg(fam, op + "_flat", op, Input(U(3, 4, 5)), None, False)
        add_arg(fam, op + "_flat_keep", op, Input(U(3, 4)), None, True)
        add_arg(fam, op + "_dim1", op, Input(U(3, 4, 5)), 1, False)
        add_arg(fam, op + "_dim_neg1_keep", op, Input(U(3, 4, 5)), -1, True)
        add_arg(fam, op + "_dim0", op, Input(U(3, 4, 5)), 0, False)
        add_arg(fam, op + "_ties", op, Input(Q(6, 7, lo=-1, hi=1, step=1)), 1, False)
        add_arg(fam, op + "_nan", op, Input(T([[1, NAN, 3, NAN], [-INF, 2, INF, 0]])), 1, False)
        if op == "argmax":
            add_arg(fam, op + "_1025", op, Input(U(1025)), 0, False)
        else:
            add_arg(fam, op + "_1000x2", op, Input(U(1000, 2)), 0, False)
        add_arg(fam, op + "_transposed", op, Input(U(5, 7), [{"transpose": [0, 1]}]), 1, False)
        add_arg(fam, op + "_int32", op, Input(I(4, 9, lo=-5, hi=5)), 1, False)
        add_arg(fam, op + "_f64", op, Input(U(4, 9, dtype=F64)), 0, False)
        add_arg(fam, op + "_f16", op, Input(U(4, 9, dtype=F16)), 1, False)

    # var / std: nonzero mean, to see the two-pass stability.
    for op in ("var", "std"):
        for corr in (0, 1):
            for dims, keep in (([1], False), ([0, 2], True), (None, False), ([-1], True)):
                tag = "all" if dims is None else "_".join(str(d) for d in dims)
                add_var(fam, "%s_c%d_dims_%s%s" % (op, corr, tag, "_keep" if keep else ""), op,
                        Input(N(3, 4, 5, mean=3.0, std=1.5)), dims, corr, keep)
        if op == "var":
            add_var(fam, op + "_1025_offset", op, Input(N(1025, mean=100.0, std=0.5)), [0], 1, False)
        else:
            add_var(fam, op + "_1000x2", op, Input(N(1000, 2, mean=-2.0, std=3.0)), [0], 0, False)
        add_var(fam, op + "_transposed", op, Input(N(5, 7), [{"transpose": [0, 1]}]), [1], 1, False)
        add_var(fam, op + "_single_c1_nan", op, Input(N(3, 1)), [1], 1, False)
        add_var(fam, op + "_single_c0", op, Input(N(3, 1)), [1], 0, False)
        add_var(fam, op + "_f64", op, Input(N(4, 6, mean=5.0, dtype=F64)), [1], 1, False)
    return fam


# ================================================================ linalg

def add_matmul(fam, name, a, b):
    y = torch.matmul(a.x, b.x)
    s = torch.matmul(a.x.abs(), b.x.abs())
    k = a.x.shape[-1]
    fam.add(name, "matmul", [a, b], [out(y, a.t.dtype, scale=s, n=k)])


def add_gemm(fam, name, alpha, a, ta, b, tb, beta, c):
    A = a.x.transpose(-1, -2) if ta else a.x
    B = b.x.transpose(-1, -2) if tb else b.x
    y = alpha * (A @ B)
    s = abs(alpha) * (A.abs() @ B.abs())
    if c is not None:
        y = y + beta * c.x
        s = s + abs(beta) * c.x.abs()
    k = A.shape[-1] + (1 if c is not None else 0)
    fam.add(name, "gemm", [a, b, c], [out(y, a.t.dtype, scale=s, n=k)], alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)


def gen_linalg():
    fam = Family("linalg")
    shapes = [("dot_7", (7,), (7,)),
              ("dot_1025", (1025,), (1025,)),
              ("vec_mat", (4,), (4, 6)),
              ("mat_vec", (6, 4), (4,)),
              ("mat_7x13_13x5", (7, 13), (13, 5)),
              ("mat_1x1", (1, 1), (1, 1)),
              ("mat_19x33_33x17", (19, 33), (33, 17)),
              ("mat_k1", (5, 1), (1, 6)),
              ("batched_2x3x4_4x5", (2, 3, 4), (4, 5)),
              ("batched_4x5_2x5x3", (4, 5), (2, 5, 3)),
              ("batched_bcast_2x1x3x4_5x4x6", (2, 1, 3, 4), (5, 4, 6)),
              ("batched_bcast_1x3x4_2x1x4x2", (1, 3, 4), (2, 1, 4, 2)),
              ("vec_batched", (4,), (2, 4, 3)),
              ("batched_vec", (2, 3, 4), (4,)),
              ("k_zero", (3, 0), (0, 4)),
              ("m_zero", (0, 3), (3, 4)),
              ("batch_zero", (0, 2, 3), (3, 4))]
    for tag, sa, sb in shapes:
        add_matmul(fam, "matmul_" + tag, Input(U(*sa)), Input(U(*sb)))
    # Attention: q [B,H,T,D] . k^T with k stored [B,H,T,D] (a transposed view).
    add_matmul(fam, "matmul_attention_qkT", Input(U(2, 3, 7, 8)), Input(U(2, 3, 7, 8), [{"transpose": [2, 3]}]))
    add_matmul(fam, "matmul_attention_pv", Input(U(2, 3, 7, 7, lo=0, hi=1)), Input(U(2, 3, 7, 8)))
    add_matmul(fam, "matmul_attention_4d", Input(U(2, 4, 5, 16)), Input(U(2, 4, 16, 5)))
    add_matmul(fam, "matmul_a_transposed", Input(U(13, 7), [{"transpose": [0, 1]}]), Input(U(13, 5)))
    add_matmul(fam, "matmul_b_sliced", Input(U(6, 5)), Input(U(10, 8), [{"slice": [0, 0, 10, 2]}, {"slice": [1, 1, 8, 2]}]))
    add_matmul(fam, "matmul_b_expanded", Input(U(3, 4, 5)), Input(U(1, 5, 2), [{"expand": [3, 5, 2]}]))
    add_matmul(fam, "matmul_permuted", Input(U(4, 2, 3), [{"permute": [1, 0, 2]}]), Input(U(2, 3, 5)))
    add_matmul(fam, "matmul_f64", Input(U(5, 9, dtype=F64)), Input(U(9, 4, dtype=F64)))
    add_matmul(fam, "matmul_f16", Input(U(5, 9, dtype=F16)), Input(U(9, 4, dtype=F16)))
    # GEMM.
    M, K, Nn = 5, 7, 3
    for ta in (False, True):
        for tb in (False, True):
            a = Input(U(*((K, M) if ta else (M, K))))
            b = Input(U(*((Nn, K) if tb else (K, Nn))))
            add_gemm(fam, "gemm_ta%d_tb%d" % (ta, tb), 1.5, a, ta, b, tb, 0.5, Input(U(M, Nn)))
    add_gemm(fam, "gemm_c_row_bcast", 1.0, Input(U(M, K)), False, Input(U(K, Nn)), False, 1.0, Input(U(Nn)))
    add_gemm(fam, "gemm_c_col_bcast", -2.0, Input(U(M, K)), False, Input(U(Nn, K)), True, 0.25, Input(U(M, 1)))
    add_gemm(fam, "gemm_no_c", 0.5, Input(U(K, M)), True, Input(U(K, Nn)), False, 0.0, None)
    add_gemm(fam, "gemm_alpha0", 0.0, Input(U(M, K)), False, Input(U(K, Nn)), False, 2.0, Input(U(M, Nn)))
    add_gemm(fam, "gemm_17x33x9", 1.0, Input(U(33, 17)), True, Input(U(9, 33)), True, -1.0, Input(U(17, 9)))
    add_gemm(fam, "gemm_c_transposed_view", 1.0, Input(U(M, K)), False, Input(U(K, Nn)), False, 0.75,
             Input(U(Nn, M), [{"transpose": [0, 1]}]))
    add_gemm(fam, "gemm_f64", 1.5, Input(U(4, 6, dtype=F64)), False, Input(U(6, 3, dtype=F64)), False, 0.5, Input(U(4, 3, dtype=F64)))
    # GEMV, outer.
    for tag, a, x in (("7x13", Input(U(7, 13)), Input(U(13))),
                      ("1025", Input(U(1, 1025)), Input(U(1025))),
                      ("transposed", Input(U(13, 7), [{"transpose": [0, 1]}]), Input(U(13))),
                      ("x_sliced", Input(U(4, 5)), Input(U(10), [{"slice": [0, 0, 10, 2]}]))):
        y = a.x @ x.x
        fam.add("matvec_" + tag, "matvec", [a, x], [out(y, F32, scale=a.x.abs() @ x.x.abs(), n=x.x.shape[0])])
    for tag, a, b in (("7x5", Input(U(7)), Input(U(5))), ("1x1", Input(U(1)), Input(U(1))),
                      ("sliced", Input(U(8), [{"slice": [0, 1, 8, 3]}]), Input(U(4))),
                      ("f64", Input(U(3, dtype=F64)), Input(U(4, dtype=F64)))):
        y = torch.outer(a.x, b.x)
        fam.add("outer_" + tag, "outer", [a, b], [out(y, a.t.dtype, scale=torch.outer(a.x.abs(), b.x.abs()))])
    # Transpose / permute (exact).
    x = Input(U(3, 5))
    fam.add("t_3x5", "t", [x], [out(x.x.t(), F32)])
    x = Input(U(2, 3, 4))
    fam.add("transpose_0_2", "transpose", [x], [out(x.x.transpose(0, 2), F32)], dims=[0, 2])
    x = Input(U(2, 3, 4))
    fam.add("transpose_neg", "transpose", [x], [out(x.x.transpose(-1, -2), F32)], dims=[-1, -2])
    x = Input(U(2, 3, 4, 5))
    fam.add("permute_3_1_0_2", "permute", [x], [out(x.x.permute(3, 1, 0, 2), F32)], dims=[3, 1, 0, 2])
    x = Input(I(2, 3, 4))
    fam.add("permute_int32", "permute", [x], [out(x.x.permute(2, 0, 1), I32)], dims=[2, 0, 1])
    x = Input(U(4, 6), [{"slice": [1, 0, 6, 2]}])
    fam.add("t_of_sliced", "t", [x], [out(x.x.t(), F32)])
    return fam


# ================================================================= shape

def exact(fam, name, op, inputs, ys, **args):
    fam.add(name, op, inputs, [out(y, inputs[0].t.dtype if is_float(y) else I32) for y in ys], **args)


def gen_shape():
    fam = Family("shape")
    x = Input(U(2, 3, 4))
    exact(fam, "reshape_2x3x4_to_4x6", "reshape", [x], [x.x.reshape(4, 6)], shape=[4, 6])
    x = Input(U(2, 3, 4))
    exact(fam, "reshape_neg1", "reshape", [x], [x.x.reshape(3, -1)], shape=[3, -1])
    x = Input(U(5, 7), [{"transpose": [0, 1]}])
    exact(fam, "reshape_of_transposed", "reshape", [x], [x.x.reshape(35)], shape=[35])
    x = Input(U(6))
    exact(fam, "reshape_add_unit_dims", "reshape", [x], [x.x.reshape(1, 6, 1)], shape=[1, 6, 1])
    x = Input(U(1))
    exact(fam, "reshape_to_rank0", "reshape", [x], [x.x.reshape([])], shape=[])
    x = Input(U(0, 4))
    exact(fam, "reshape_zero", "reshape", [x], [x.x.reshape(2, 0, 3)], shape=[2, 0, 3])
    x = Input(I(2, 6))
    exact(fam, "reshape_int32", "reshape", [x], [x.x.reshape(3, 4)], shape=[3, 4])
    x = Input(U(2, 3, 4, 5))
    exact(fam, "flatten_all", "flatten", [x], [x.x.flatten()], start=0, end=-1)
    x = Input(U(2, 3, 4, 5))
    exact(fam, "flatten_1_2", "flatten", [x], [x.x.flatten(1, 2)], start=1, end=2)
    x = Input(U(2, 3, 4), [{"permute": [2, 0, 1]}])
    exact(fam, "flatten_permuted", "flatten", [x], [x.x.flatten(1, 2)], start=1, end=2)
    x = Input(U(1, 3, 1, 4, 1))
    exact(fam, "squeeze_all", "squeeze", [x], [x.x.squeeze()], dims=[])
    x = Input(U(1, 3, 1, 4, 1))
    exact(fam, "squeeze_dim2", "squeeze", [x], [x.x.squeeze(2)], dims=[2])
    x = Input(U(1, 3, 1, 4, 1))
    exact(fam, "squeeze_dims_0_neg1", "squeeze", [x], [x.x.squeeze(4).squeeze(0)], dims=[0, -1])
    x = Input(U(3, 4))
    exact(fam, "squeeze_nonunit_noop", "squeeze", [x], [x.x], dims=[0])
    for d in (0, 1, 2, -1, -3):
        x = Input(U(3, 4))
        exact(fam, "unsqueeze_%d" % d, "unsqueeze", [x], [x.x.unsqueeze(d)], dim=d)
    x = Input(U(3, 1))
    exact(fam, "expand_3x1_to_3x4", "expand", [x], [x.x.expand(3, 4)], shape=[3, 4])
    x = Input(U(3, 1))
    exact(fam, "expand_new_dims_keep", "expand", [x], [x.x.expand(2, -1, 5)], shape=[2, -1, 5])
    x = Input(U(1, 1))
    exact(fam, "expand_to_zero", "expand", [x], [x.x.expand(0, 3)], shape=[0, 3])
    x = Input(I(1, 4))
    exact(fam, "expand_int32", "expand", [x], [x.x.expand(3, 4)], shape=[3, 4])
    x = Input(U(4))
    exact(fam, "broadcast_to_4_to_2x3x4", "broadcast_to", [x], [torch.broadcast_to(x.x, (2, 3, 4))], shape=[2, 3, 4])
    x = Input(U(3, 1, 2))
    exact(fam, "broadcast_to_size1", "broadcast_to", [x], [torch.broadcast_to(x.x, (3, 5, 2))], shape=[3, 5, 2])
    big = 2 ** 31 - 1
    for tag, shape, (dim, start, end, step) in (("basic", (7, 9), (1, 2, 7, 1)),
                                              ("step2", (7, 9), (1, 0, 9, 2)),
                                              ("step3_dim0", (10, 4), (0, 1, 10, 3)),
                                              ("negative_start", (7, 9), (1, -4, 9, 1)),
                                              ("negative_end", (7, 9), (0, 0, -2, 2)),
                                              ("end_past", (7, 9), (1, 5, big, 1)),
                                              ("start_past", (7, 9), (1, 20, big, 1)),
                                              ("empty", (7, 9), (0, 4, 2, 1)),
                                              ("neg_dim", (2, 3, 8), (-1, 1, 8, 3)),
                                              ("step_big", (1025,), (0, 3, 1025, 97))):
        x = Input(U(*shape))
        idx = [slice(None)] * len(shape)
        idx[dim] = slice(start, end, step)
        exact(fam, "slice_" + tag, "slice", [x], [x.x[tuple(idx)]], dim=dim, start=start, end=end, step=step)
    x = Input(U(6, 8), [{"transpose": [0, 1]}])
    exact(fam, "slice_of_transposed", "slice", [x], [x.x[:, 1:6:2]], dim=1, start=1, end=6, step=2)
    x = Input(I(12))
    exact(fam, "slice_int32", "slice", [x], [x.x[1:11:4]], dim=0, start=1, end=11, step=4)
    # concat / stack
    for tag, shapes, dim in (("dim0", [(2, 3), (4, 3), (1, 3)], 0), ("dim1", [(2, 3), (2, 1), (2, 5)], 1),
                             ("neg_dim", [(2, 3, 2), (2, 3, 1)], -1), ("with_empty", [(2, 3), (0, 3), (1, 3)], 0),
                             ("single", [(3, 2)], 0)):
        xs = [Input(U(*s)) for s in shapes]
        exact(fam, "concat_" + tag, "concat", xs, [torch.cat([x.x for x in xs], dim)], dim=dim)
    xs = [Input(U(3, 4), [{"transpose": [0, 1]}]), Input(U(4, 2))]
    exact(fam, "concat_noncontig", "concat", xs, [torch.cat([x.x for x in xs], 1)], dim=1)
    xs = [Input(I(2, 2)), Input(I(1, 2))]
    exact(fam, "concat_int32", "concat", xs, [torch.cat([x.x for x in xs], 0)], dim=0)
    for tag, dim in (("dim0", 0), ("dim1", 1), ("dim_last", 2), ("neg", -1)):
        xs = [Input(U(2, 3)) for _ in range(3)]
        exact(fam, "stack_" + tag, "stack", xs, [torch.stack([x.x for x in xs], dim)], dim=dim)
    xs = [Input(U(3, 2), [{"transpose": [0, 1]}]), Input(U(2, 3))]
    exact(fam, "stack_noncontig", "stack", xs, [torch.stack([x.x for x in xs], 0)], dim=0)
    # split / chunk
    for tag, shape, dim, size in (("even", (6, 4), 0, 2), ("uneven", (7, 4), 0, 3), ("dim1", (3, 10), 1, 4),
                                  ("bigger_than_dim", (3, 2), 1, 5), ("neg_dim", (2, 3, 5), -1, 2)):
        x = Input(U(*shape))
        exact(fam, "split_" + tag, "split", [x], list(torch.split(x.x, size, dim)), dim=dim, size=size)
    for tag, shape, dim, n in (("even", (6, 4), 0, 3), ("uneven", (7, 4), 0, 3), ("dim1", (3, 10), 1, 4),
                               ("more_than_dim", (3, 2), 1, 5), ("uneven_5_of_6", (6, 2), 0, 4)):
        x = Input(U(*shape))
        exact(fam, "chunk_" + tag, "chunk", [x], list(torch.chunk(x.x, n, dim)), dim=dim, chunks=n)
    # pad
    for tag, shape, pads, mode, value in (("const_last", (3, 4), [1, 2], "constant", 0.0),
                                          ("const_last2", (2, 3, 4), [1, 0, 2, 1], "constant", 1.5),
                                          ("const_3dims", (2, 3, 4), [0, 1, 1, 0, 2, 2], "constant", -1.0),
                                          ("const_zero_pads", (3, 4), [0, 0], "constant", 0.0),
                                          ("const_empty_in", (0, 2), [1, 1], "constant", 2.0),
                                          ("reflect_1d", (2, 3, 7), [2, 3], "reflect", 0.0),
                                          ("reflect_2d", (1, 2, 4, 5), [1, 2, 3, 1], "reflect", 0.0),
                                          ("reflect_2d_unbatched", (3, 4), [3, 3], "reflect", 0.0)):
        x = Input(U(*shape))
        y = F.pad(x.x, pads, mode=mode, value=value) if mode == "constant" else F.pad(x.x, pads, mode=mode)
        exact(fam, "pad_" + tag, "pad", [x], [y], pads=pads, mode=mode, value=value)
    x = Input(U(5, 4), [{"transpose": [0, 1]}])
    exact(fam, "pad_reflect_transposed", "pad", [x], [F.pad(x.x.unsqueeze(0), [2, 2], mode="reflect").squeeze(0)],
          pads=[2, 2], mode="reflect", value=0.0)
    x = Input(I(2, 3))
    exact(fam, "pad_const_int32", "pad", [x], [F.pad(x.x, [1, 1], value=7)], pads=[1, 1], mode="constant", value=7.0)
    # contiguous
    x = Input(U(4, 5, 3), [{"permute": [2, 0, 1]}, {"slice": [1, 1, 4, 2]}])
    exact(fam, "contiguous_permuted_sliced", "contiguous", [x], [x.x.contiguous()])
    x = Input(U(3, 1), [{"expand": [3, 4]}])
    exact(fam, "contiguous_expanded", "contiguous", [x], [x.x.contiguous()])
    # cast
    def cast(name, x, to, y):
        fam.add(name, "cast", [x], [out(y, to)], to=to)

    x = Input(T([0.5, -0.5, 1.9, -1.9, 2.5, -2.5, 100.75, -7.0, 0.0, 1e9, -1e9]))
    cast("cast_f32_to_i32_trunc", x, "int32", x.t.to(I32))
    x = Input(I(7, lo=-1000, hi=1000))
    cast("cast_i32_to_f32", x, "float32", x.x)
    x = Input(T([16777217, -16777219, 2147483647], I32))
    cast("cast_i32_to_f32_rounding", x, "float32", x.x.to(F32))
    x = Input(U(7))
    cast("cast_f32_to_f64", x, "float64", x.x)
    x = Input(T([0.1, 1 / 3, -2.0 / 3, 1e-40, 3.5e38, NAN, INF], F64))
    cast("cast_f64_to_f32", x, "float32", x.x.to(F32))
    x = Input(T([0.1, 1 / 3, 65504, 65520, 70000, -1e-8, 6e-5, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, NAN, -INF]))
    cast("cast_f32_to_f16", x, "float16", x.t.to(F16))
    x = Input(U(7, dtype=F16))
    cast("cast_f16_to_f32", x, "float32", x.x)
    x = Input(U(5, 3), [{"transpose": [0, 1]}])
    cast("cast_transposed_to_f64", x, "float64", x.x)
    x = Input(U(4, 4))
    cast("cast_same_dtype", x, "float32", x.x)
    x = Input(U(1, 3, lo=-5, hi=5), [{"expand": [4, 3]}])
    cast("cast_expanded_to_i32", x, "int32", x.t.to(I32))
    return fam


# ============================================================== indexing

def gen_indexing():
    fam = Family("indexing")
    for tag, src_shape, idx_shape, dim in (("dim0", (5, 4), (3, 4), 0), ("dim1", (3, 6), (3, 4), 1),
                                          ("neg_dim", (2, 3, 5), (2, 3, 7), -1), ("dim1_3d", (2, 4, 3), (2, 6, 3), 1),
                                          ("index_smaller", (4, 6), (2, 3), 1), ("rank1", (9,), (12,), 0),
                                          ("empty", (3, 4), (0, 4), 0)):
        src = Input(U(*src_shape))
        d = dim % len(src_shape)
        idx = Input(I(*idx_shape, lo=0, hi=src_shape[d]))
        y = torch.gather(src.x, dim, idx.x)
        fam.add("gather_" + tag, "gather", [src, idx], [out(y, F32)], dim=dim)
    src = Input(I(3, 5))
    idx = Input(I(3, 2, lo=0, hi=5))
    fam.add("gather_int32", "gather", [src, idx], [out(torch.gather(src.x, 1, idx.x), I32)], dim=1)
    src = Input(U(6, 3), [{"transpose": [0, 1]}])
    idx = Input(I(3, 4, lo=0, hi=6))
    fam.add("gather_transposed_src", "gather", [src, idx], [out(torch.gather(src.x, 1, idx.x), F32)], dim=1)
    src = Input(U(3, 6))
    idx = Input(I(5, 3, lo=0, hi=6), [{"transpose": [0, 1]}])
    fam.add("gather_transposed_index", "gather", [src, idx], [out(torch.gather(src.x, 1, idx.x), F32)], dim=1)
    src = Input(T([[16777217, 2147483647], [-16777219, 5]], I32))
    idx = Input(T([[1, 0, 1], [0, 0, 1]], I32))
    fam.add("gather_int32_large", "gather", [src, idx], [out(torch.gather(src.x, 1, idx.x), I32)], dim=1)
    src = Input(U(4, 5, dtype=F64))
    idx = Input(I(2, 5, lo=0, hi=4))
    fam.add("gather_f64", "gather", [src, idx], [out(torch.gather(src.x, 0, idx.x), F64)], dim=0)
    # index_select (embedding lookup).
    for tag, shape, n, dim in (("embedding", (10, 4), 6, 0), ("dim1", (3, 7), 5, 1), ("repeated", (5, 3), 9, 0),
                               ("neg_dim", (2, 3, 4), 3, -1), ("empty_index", (5, 3), 0, 0),
                               ("vocab1025", (1025, 2), 11, 0)):
        w = Input(U(*shape))
        idx = Input(I(n, lo=0, hi=shape[dim]))
        y = torch.index_select(w.x, dim, idx.x.long())
        fam.add("index_select_" + tag, "index_select", [w, idx], [out(y, F32)], dim=dim)
    w = Input(I(6, 3))
    idx = Input(I(4, lo=0, hi=6))
    fam.add("index_select_int32", "index_select", [w, idx], [out(torch.index_select(w.x, 0, idx.x.long()), I32)], dim=0)
    w = Input(U(4, 6), [{"slice": [1, 0, 6, 2]}])
    idx = Input(I(5, lo=0, hi=4))
    fam.add("index_select_sliced", "index_select", [w, idx], [out(torch.index_select(w.x, 0, idx.x.long()), F32)], dim=0)
    # scatter_add.
    for tag, dst_shape, idx_shape, dim in (("dim0", (5, 4), (6, 4), 0), ("dim1", (3, 6), (3, 8), 1),
                                          ("neg_dim", (2, 3, 4), (2, 3, 5), -1), ("rank1", (4,), (10,), 0),
                                          ("smaller", (5, 4), (2, 4), 0)):
        d = dim % len(dst_shape)
        dst = Input(U(*dst_shape))
        idx = Input(I(*idx_shape, lo=0, hi=dst_shape[d]))
        src = Input(U(*idx_shape))
        y = dst.x.scatter_add(dim, idx.x.long(), src.x)
        s = dst.x.abs().scatter_add(dim, idx.x.long(), src.x.abs())
        cnt = torch.zeros(dst_shape, dtype=F64).scatter_add(dim, idx.x.long(), torch.ones(idx_shape, dtype=F64))
        fam.add("scatter_add_" + tag, "scatter_add", [dst, idx, src], [out(y, F32, scale=s, n=int(cnt.max().item()) + 1)], dim=dim)
    dst = Input(I(4, 3))
    idx = Input(I(5, 3, lo=0, hi=4))
    src = Input(I(5, 3))
    fam.add("scatter_add_int32", "scatter_add", [dst, idx, src], [out(dst.x.scatter_add(0, idx.x.long(), src.x), I32)], dim=0)
    dst = Input(U(3, 4), [{"transpose": [0, 1]}])
    idx = Input(I(4, 5, lo=0, hi=3))
    src = Input(U(4, 5))
    y = dst.x.scatter_add(1, idx.x.long(), src.x)
    fam.add("scatter_add_transposed_dst", "scatter_add", [dst, idx, src],
            [out(y, F32, scale=dst.x.abs().scatter_add(1, idx.x.long(), src.x.abs()), n=6)], dim=1)
    dst = Input(U(4, 3))
    idx = Input(I(3, 5, lo=0, hi=4), [{"transpose": [0, 1]}])
    src = Input(U(3, 10), [{"slice": [1, 0, 10, 2]}, {"transpose": [0, 1]}])
    y = dst.x.scatter_add(0, idx.x.long(), src.x)
    fam.add("scatter_add_noncontig_index_src", "scatter_add", [dst, idx, src],
            [out(y, F32, scale=dst.x.abs().scatter_add(0, idx.x.long(), src.x.abs()), n=6)], dim=0)
    dst = Input(T([16777216, 0, 2147483000], I32))
    idx = Input(T([0, 0, 2, 1], I32))
    src = Input(T([1, 1, 600, -16777217], I32))
    fam.add("scatter_add_int32_large", "scatter_add", [dst, idx, src], [out(dst.x.scatter_add(0, idx.x.long(), src.x), I32)], dim=0)
    # one_hot.
    for tag, shape, k in (("5_of_4", (5,), 4), ("2x3_of_6", (2, 3), 6), ("single_class", (3,), 1), ("empty", (0,), 3)):
        idx = Input(I(*shape, lo=0, hi=k))
        fam.add("one_hot_" + tag, "one_hot", [idx], [out(F.one_hot(idx.x.long(), k), I32)], num_classes=k)
    return fam


# ============================================================== nn_conv

def add_conv(fam, name, N_, C, H, W, O, KH, KW, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, bias=True,
             dtype=F32, xview=None):
    if xview:
        x = Input(U(N_, H, W, C, dtype=dtype), xview)
    else:
        x = Input(U(N_, C, H, W, dtype=dtype))
    w = Input(U(O, C // groups, KH, KW, dtype=dtype))
    b = Input(U(O, dtype=dtype)) if bias else None
    bx = b.x if bias else None
    y = F.conv2d(x.x, w.x, bx, stride, padding, dilation, groups)
    s = F.conv2d(x.x.abs(), w.x.abs(), bx.abs() if bias else None, stride, padding, dilation, groups)
    fam.add(name, "conv2d", [x, w, b], [out(y, dtype, scale=s, n=C // groups * KH * KW + 1)],
            stride=list(stride), padding=list(padding), dilation=list(dilation), groups=groups)


def add_convt(fam, name, N_, C, H, W, O, KH, KW, stride=(1, 1), padding=(0, 0), output_padding=(0, 0), dilation=(1, 1),
              groups=1, bias=True, dtype=F32):
    x = Input(U(N_, C, H, W, dtype=dtype))
    w = Input(U(C, O // groups, KH, KW, dtype=dtype))
    b = Input(U(O, dtype=dtype)) if bias else None
    bx = b.x if bias else None
    y = F.conv_transpose2d(x.x, w.x, bx, stride, padding, output_padding, groups, dilation)
    s = F.conv_transpose2d(x.x.abs(), w.x.abs(), bx.abs() if bias else None, stride, padding, output_padding, groups, dilation)
    fam.add(name, "conv_transpose2d", [x, w, b], [out(y, dtype, scale=s, n=C // groups * KH * KW + 1)],
            stride=list(stride), padding=list(padding), output_padding=list(output_padding), dilation=list(dilation),
            groups=groups)


def gen_nn_conv():
    fam = Family("nn_conv")
    add_conv(fam, "conv2d_basic", 1, 3, 5, 5, 4, 3, 3)
    add_conv(fam, "conv2d_stride2_pad1_batch2_nonsquare", 2, 3, 7, 9, 4, 3, 2, stride=(2, 2), padding=(1, 1))
    add_conv(fam, "conv2d_dilation2_pad2", 1, 2, 8, 7, 3, 3, 3, padding=(2, 2), dilation=(2, 2))
    add_conv(fam, "conv2d_groups2", 2, 4, 6, 5, 6, 3, 3, padding=(1, 1), groups=2)
    add_conv(fam, "conv2d_depthwise", 1, 3, 7, 6, 3, 3, 3, padding=(1, 1), groups=3)
    add_conv(fam, "conv2d_depthwise_mult2_stride2", 2, 3, 8, 8, 6, 3, 3, stride=(2, 2), padding=(1, 1), groups=3)
    add_conv(fam, "conv2d_asymmetric_all", 1, 2, 9, 11, 3, 2, 3, stride=(2, 1), padding=(0, 2), dilation=(1, 2))
    add_conv(fam, "conv2d_no_bias", 2, 3, 5, 6, 2, 3, 3, stride=(1, 2), bias=False)
    add_conv(fam, "conv2d_1x1", 2, 5, 4, 3, 7, 1, 1)
    add_conv(fam, "conv2d_kernel_is_input", 1, 3, 4, 5, 2, 4, 5)
    add_conv(fam, "conv2d_1x1_image", 3, 4, 1, 1, 2, 1, 1)
    add_conv(fam, "conv2d_stride_gt_kernel", 1, 2, 9, 9, 2, 2, 2, stride=(3, 3))
    add_conv(fam, "conv2d_groups4_dilation_stride", 2, 8, 10, 9, 4, 3, 2, stride=(2, 2), padding=(2, 1), dilation=(2, 3), groups=4)
    add_conv(fam, "conv2d_pad_gt_kernel", 1, 2, 3, 4, 2, 2, 2, padding=(3, 2))
    add_conv(fam, "conv2d_larger", 2, 8, 8, 8, 4, 3, 3, padding=(1, 1))
    add_conv(fam, "conv2d_channels_last_view", 2, 3, 5, 6, 4, 3, 3, padding=(1, 1), xview=[{"permute": [0, 3, 1, 2]}])
    add_conv(fam, "conv2d_f64", 1, 3, 5, 5, 2, 3, 3, padding=(1, 1), dtype=F64)
    add_conv(fam, "conv2d_f16", 1, 2, 5, 5, 2, 3, 3, dtype=F16)

    add_convt(fam, "conv_transpose2d_basic", 1, 3, 4, 4, 2, 3, 3)
    add_convt(fam, "conv_transpose2d_stride2_pad1_outpad1", 2, 3, 4, 5, 4, 3, 3, stride=(2, 2), padding=(1, 1), output_padding=(1, 1))
    add_convt(fam, "conv_transpose2d_groups2_stride2", 1, 4, 3, 4, 6, 3, 3, stride=(2, 2), groups=2)
    add_convt(fam, "conv_transpose2d_dilation2", 1, 2, 4, 3, 3, 3, 2, dilation=(2, 2), padding=(1, 0))
    add_convt(fam, "conv_transpose2d_nonsquare_stride_outpad", 2, 2, 3, 4, 3, 2, 3, stride=(2, 3), padding=(0, 1), output_padding=(1, 2))
    add_convt(fam, "conv_transpose2d_no_bias_batch2", 2, 3, 5, 5, 2, 2, 2, stride=(2, 2), bias=False)
    add_convt(fam, "conv_transpose2d_depthwise", 1, 3, 4, 4, 3, 3, 3, stride=(2, 2), padding=(1, 1), output_padding=(1, 1), groups=3)
    add_convt(fam, "conv_transpose2d_1x1", 2, 4, 3, 3, 5, 1, 1)
    add_convt(fam, "conv_transpose2d_f64", 1, 2, 3, 3, 2, 3, 3, stride=(2, 2), dtype=F64)
    return fam


# ============================================================== nn_pool

def add_maxpool(fam, name, x, kernel, stride, padding=(0, 0), dilation=(1, 1), ceil_mode=False):
    y, idx = F.max_pool2d(x.x, kernel, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True)
    fam.add(name, "max_pool2d", [x], [out(y, x.t.dtype), out(idx, I32)], kernel=list(kernel), stride=list(stride),
            padding=list(padding), dilation=list(dilation), ceil_mode=ceil_mode)


def add_avgpool(fam, name, x, kernel, stride, padding=(0, 0), ceil_mode=False, count_include_pad=True):
    y = F.avg_pool2d(x.x, kernel, stride, padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    s = F.avg_pool2d(x.x.abs(), kernel, stride, padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    fam.add(name, "avg_pool2d", [x], [out(y, x.t.dtype, scale=s, n=kernel[0] * kernel[1])], kernel=list(kernel),
            stride=list(stride), padding=list(padding), dilation=[1, 1], ceil_mode=ceil_mode,
            count_include_pad=count_include_pad)


def gen_nn_pool():
    fam = Family("nn_pool")
    add_maxpool(fam, "max_pool2d_k2s2", Input(U(1, 2, 6, 6)), (2, 2), (2, 2))
    add_maxpool(fam, "max_pool2d_k3s2p1", Input(U(2, 3, 7, 7)), (3, 3), (2, 2), (1, 1))
    add_maxpool(fam, "max_pool2d_ceil", Input(U(1, 2, 8, 8)), (3, 3), (2, 2), ceil_mode=True)
    add_maxpool(fam, "max_pool2d_ceil_pad", Input(U(1, 1, 7, 6)), (2, 2), (2, 2), (1, 1), ceil_mode=True)
    add_maxpool(fam, "max_pool2d_dilation2", Input(U(2, 2, 9, 8)), (3, 2), (1, 2), (1, 1), dilation=(2, 2))
    add_maxpool(fam, "max_pool2d_nonsquare", Input(U(1, 3, 5, 9)), (2, 3), (1, 2))
    add_maxpool(fam, "max_pool2d_negative_pad", Input(U(1, 2, 4, 4, lo=-5, hi=-1)), (3, 3), (1, 1), (1, 1))
    add_maxpool(fam, "max_pool2d_with_inf", Input(T([[[[-INF, -INF, 1, 2], [-INF, -INF, 3, INF], [0, 1, 2, 3]]]])), (2, 2), (1, 2))
    add_maxpool(fam, "max_pool2d_stride_gt_kernel", Input(U(1, 2, 9, 10)), (2, 2), (3, 4))
    add_maxpool(fam, "max_pool2d_global", Input(U(2, 3, 5, 7)), (5, 7), (1, 1))
    add_maxpool(fam, "max_pool2d_channels_last_view", Input(U(2, 6, 5, 3), [{"permute": [0, 3, 1, 2]}]), (2, 2), (2, 2))
    add_maxpool(fam, "max_pool2d_f64", Input(U(1, 2, 5, 5, dtype=F64)), (2, 2), (2, 2), (1, 1))
    add_maxpool(fam, "max_pool2d_f16", Input(U(1, 2, 5, 5, dtype=F16)), (3, 3), (2, 2))
    for cip in (True, False):
        t = "incl" if cip else "excl"
        add_avgpool(fam, "avg_pool2d_k3s2p1_" + t, Input(U(2, 3, 7, 7)), (3, 3), (2, 2), (1, 1), count_include_pad=cip)
        add_avgpool(fam, "avg_pool2d_ceil_" + t, Input(U(1, 2, 8, 8)), (3, 3), (2, 2), (1, 1), ceil_mode=True, count_include_pad=cip)
        add_avgpool(fam, "avg_pool2d_nonsquare_" + t, Input(U(1, 2, 6, 9)), (2, 3), (2, 2), (1, 1), count_include_pad=cip)
        add_avgpool(fam, "avg_pool2d_ceil_nopad_" + t, Input(U(1, 1, 7, 7)), (2, 2), (2, 2), ceil_mode=True, count_include_pad=cip)
    add_avgpool(fam, "avg_pool2d_stride_gt_kernel", Input(U(1, 2, 9, 10)), (2, 3), (3, 4), (1, 1), count_include_pad=False)
    add_avgpool(fam, "avg_pool2d_k2s2", Input(U(2, 2, 6, 6)), (2, 2), (2, 2))
    add_avgpool(fam, "avg_pool2d_transposed_view", Input(U(1, 2, 7, 6), [{"transpose": [2, 3]}]), (3, 3), (1, 1), (1, 1), count_include_pad=False)
    add_avgpool(fam, "avg_pool2d_f64", Input(U(1, 2, 5, 5, dtype=F64)), (3, 3), (2, 2), (1, 1), count_include_pad=False)
    for tag, shape, osz in (("1x1", (2, 3, 5, 7), (1, 1)), ("1x1_big", (1, 2, 33, 31), (1, 1)),
                            ("divisible", (1, 2, 8, 6), (4, 3)), ("identity", (1, 2, 3, 3), (3, 3)),
                            ("1x1_f64", (1, 2, 4, 4), (1, 1))):
        x = Input(U(*shape, dtype=F64 if "f64" in tag else F32))
        y = F.adaptive_avg_pool2d(x.x, osz)
        s = F.adaptive_avg_pool2d(x.x.abs(), osz)
        n = (shape[2] // osz[0]) * (shape[3] // osz[1])
        fam.add("adaptive_avg_pool2d_" + tag, "adaptive_avg_pool2d", [x], [out(y, x.t.dtype, scale=s, n=n)], output_size=list(osz))
    x = Input(U(2, 7, 5, 3), [{"permute": [0, 3, 1, 2]}])
    fam.add("adaptive_avg_pool2d_1x1_view", "adaptive_avg_pool2d", [x],
            [out(F.adaptive_avg_pool2d(x.x, 1), F32, scale=F.adaptive_avg_pool2d(x.x.abs(), 1), n=35)], output_size=[1, 1])
    return fam


# ============================================================== nn_norm

def norm_scale(x, dims, w_shape, w, b, eps, mean=None, var=None):
    """Per-element error scale of (x - mean)/sqrt(var + eps)*w + b: the rounding of x - mean, the
    accumulated error of the mean (~ mean |x|) and of the variance (relative ~ V below)."""
    if mean is None:
        mean = x.mean(dim=dims, keepdim=True)
        var = x.var(dim=dims, unbiased=False, keepdim=True)
        ma = x.abs().mean(dim=dims, keepdim=True)
        v_rel = (x.abs() * (x - mean).abs()).mean(dim=dims, keepdim=True) / (var + eps)
    else:
        ma = mean.abs()
        v_rel = 0.0
    sd = torch.sqrt(var + eps)
    xh = (x - mean) / sd
    wa = w.abs().reshape(w_shape) if w is not None else 1.0
    ba = b.abs().reshape(w_shape) if b is not None else 0.0
    return wa * ((ma + x.abs()) / sd + xh.abs() * (1 + v_rel)) + ba


def add_batch_norm(fam, name, x, rm, rv, w, b, training, momentum=0.1, eps=1e-5):
    X = x.x
    C = X.shape[1]
    dims = [0] + list(range(2, X.dim()))
    cnt = X.numel() // C
    wshape = [1, C] + [1] * (X.dim() - 2)
    rmx = rm.x.clone() if rm else None
    rvx = rv.x.clone() if rv else None
    y = F.batch_norm(X, rmx, rvx, w.x if w else None, b.x if b else None, training, momentum, eps)
    if training:
        s = norm_scale(X, dims, wshape, w.x if w else None, b.x if b else None, eps)
        n = cnt
    else:
        s = norm_scale(X, [], wshape, w.x if w else None, b.x if b else None, eps,
                       rm.x.reshape(wshape), rv.x.reshape(wshape))
        n = 4
    outs = [out(y, x.t.dtype, scale=s, n=n)]
    if training and rm is not None:
        mean = X.mean(dim=dims)
        dev = X - X.mean(dim=dims, keepdim=True)
        var_u = (dev * dev).sum(dim=dims) / (cnt - 1)
        vs = ((dev * dev).sum(dim=dims) + 2 * (dev.abs() * X.abs()).sum(dim=dims)) / (cnt - 1)
        outs.append(out(rmx, rm.t.dtype, scale=(1 - momentum) * rm.x.abs() + momentum * X.abs().mean(dim=dims), n=cnt))
        outs.append(out(rvx, rv.t.dtype, scale=(1 - momentum) * rv.x.abs() + momentum * vs, n=cnt))
        assert torch.allclose(rvx, (1 - momentum) * rv.x + momentum * var_u)
    fam.add(name, "batch_norm", [x, rm, rv, w, b], outs, training=training, momentum=momentum, eps=eps)


def add_layer_norm(fam, name, x, nshape, w, b, eps=1e-5):
    X = x.x
    y = F.layer_norm(X, nshape, w.x if w else None, b.x if b else None, eps)
    dims = list(range(X.dim() - len(nshape), X.dim()))
    wshape = [1] * (X.dim() - len(nshape)) + list(nshape)
    s = norm_scale(X, dims, wshape, w.x if w else None, b.x if b else None, eps)
    n = 1
    for d in nshape:
        n *= d
    fam.add(name, "layer_norm", [x, w, b], [out(y, x.t.dtype, scale=s, n=n)], normalized_shape=list(nshape), eps=eps)


def gen_nn_norm():
    fam = Family("nn_norm")

    def stats(C, dtype=F32):
        return Input(U(C, dtype=dtype)), Input(U(C, lo=0.5, hi=2, dtype=dtype)), Input(U(C, lo=0.5, hi=1.5, dtype=dtype)), Input(U(C, dtype=dtype))

    rm, rv, w, b = stats(3)
    add_batch_norm(fam, "batch_norm_train_4x3x5x6", Input(N(4, 3, 5, 6, mean=2.0, std=1.5)), rm, rv, w, b, True)
    rm, rv, w, b = stats(3)
    add_batch_norm(fam, "batch_norm_eval_4x3x5x6", Input(N(4, 3, 5, 6, mean=2.0, std=1.5)), rm, rv, w, b, False)
    rm, rv, w, b = stats(5)
    add_batch_norm(fam, "batch_norm_train_2d", Input(N(8, 5, mean=-1.0)), rm, rv, w, b, True, momentum=0.3, eps=1e-3)
    rm, rv, w, b = stats(5)
    add_batch_norm(fam, "batch_norm_eval_2d", Input(N(8, 5)), rm, rv, w, b, False, eps=1e-3)
    rm, rv, _, _ = stats(4)
    add_batch_norm(fam, "batch_norm_train_no_affine", Input(N(2, 4, 3, 3, mean=0.5)), rm, rv, None, None, True)
    _, _, w, b = stats(4)
    add_batch_norm(fam, "batch_norm_train_no_running", Input(N(2, 4, 3, 3)), None, None, w, b, True)
    rm, rv, w, b = stats(3)
    add_batch_norm(fam, "batch_norm_train_large_offset", Input(N(8, 3, 5, 5, mean=50.0, std=0.5)), rm, rv, w, b, True)
    rm, rv, w, b = stats(3)
    add_batch_norm(fam, "batch_norm_train_channels_last_view",
                   Input(N(2, 4, 5, 3, mean=1.0), [{"permute": [0, 3, 1, 2]}]), rm, rv, w, b, True)
    rm, rv, w, b = stats(3)
    add_batch_norm(fam, "batch_norm_eval_no_affine", Input(N(2, 3, 4, 4)), rm, rv, None, None, False)
    rm, rv, w, b = stats(2, F64)
    add_batch_norm(fam, "batch_norm_train_f64", Input(N(3, 2, 4, 4, mean=1.0, dtype=F64)), rm, rv, w, b, True)

    add_layer_norm(fam, "layer_norm_4x7", Input(N(4, 7, mean=1.0)), [7], Input(U(7)), Input(U(7)))
    add_layer_norm(fam, "layer_norm_2x3x4x5_last2", Input(N(2, 3, 4, 5, mean=-2.0, std=2.0)), [4, 5], Input(U(4, 5)), Input(U(4, 5)))
    add_layer_norm(fam, "layer_norm_no_affine", Input(N(3, 6)), [6], None, None, eps=1e-3)
    add_layer_norm(fam, "layer_norm_weight_only", Input(N(3, 6)), [6], Input(U(6)), None)
    add_layer_norm(fam, "layer_norm_1025", Input(N(1, 1025, mean=10.0, std=0.3)), [1025], None, None)
    add_layer_norm(fam, "layer_norm_all_dims", Input(N(3, 4)), [3, 4], Input(U(3, 4)), Input(U(3, 4)))
    add_layer_norm(fam, "layer_norm_transposed", Input(N(6, 4), [{"transpose": [0, 1]}]), [6], Input(U(6)), Input(U(6)))
    add_layer_norm(fam, "layer_norm_size1", Input(N(4, 1)), [1], Input(U(1)), Input(U(1)))
    add_layer_norm(fam, "layer_norm_f64", Input(N(3, 5, mean=2.0, dtype=F64)), [5], Input(U(5, dtype=F64)), Input(U(5, dtype=F64)))
    return fam


# ============================================================== nn_misc

def softmax_scales(x, dim, log):
    lse = torch.logsumexp(x, dim=dim, keepdim=True)
    m = torch.nan_to_num(x.amax(dim=dim, keepdim=True), nan=0.0, posinf=0.0, neginf=0.0)
    p = torch.exp(x - lse)
    w = torch.nan_to_num(p * (x - m).abs(), nan=0.0, posinf=0.0, neginf=0.0).sum(dim=dim, keepdim=True)
    lse_scale = 1 + lse.abs() + w
    xs = torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0).abs()
    if log:
        return xs + lse_scale
    return p * (1 + (x - lse).abs() + lse_scale)


def add_softmax(fam, name, op, x, dim):
    X = x.x
    y = (F.log_softmax if op == "log_softmax" else F.softmax)(X, dim)
    s = softmax_scales(X, dim, op == "log_softmax")
    fam.add(name, op, [x], [out(y, x.t.dtype, scale=s, n=X.shape[dim] if X.dim() else 1)], dim=dim)


def gen_nn_misc():
    fam = Family("nn_misc")
    for op in ("softmax", "log_softmax"):
        add_softmax(fam, op + "_3x7_last", op, Input(U(3, 7, lo=-4, hi=4)), -1)
        add_softmax(fam, op + "_3x7_dim0", op, Input(U(3, 7, lo=-4, hi=4)), 0)
        add_softmax(fam, op + "_2x3x4_dim1", op, Input(U(2, 3, 4, lo=-4, hi=4)), 1)
        add_softmax(fam, op + "_large_values", op, Input(U(3, 5, lo=900, hi=1000)), 1)
        add_softmax(fam, op + "_masked_neg_inf", op, Input(T([[0, -INF, 1, -INF], [2, 3, -INF, 0.5], [-INF, -INF, -INF, 5]])), 1)
        n = 1025 if op == "softmax" else 257
        add_softmax(fam, op + "_%d" % n, op, Input(U(1, n, lo=-8, hi=8)), 1)
        add_softmax(fam, op + "_transposed", op, Input(U(7, 3), [{"transpose": [0, 1]}]), 1)
        add_softmax(fam, op + "_attention_4d", op, Input(U(2, 2, 5, 5, lo=-3, hi=3)), -1)
        add_softmax(fam, op + "_single", op, Input(U(4, 1)), 1)
        add_softmax(fam, op + "_f64", op, Input(U(3, 6, lo=-5, hi=5, dtype=F64)), 1)
    # RBF kernel exp(-gamma * cdist(x, y)^2), computed directly in float64.
    for tag, n, m, d, gamma in (("5x4_d3", 5, 4, 3, 0.5), ("1x1_d1", 1, 1, 1, 1.0), ("6x9_d7", 6, 9, 7, 0.1),
                                ("17x13_d16", 17, 13, 16, 0.05)):
        x, y = Input(U(n, d)), Input(U(m, d))
        diff = x.x[:, None, :] - y.x[None, :, :]
        d2 = (diff * diff).sum(-1)
        k = torch.exp(-gamma * d2)
        s = k * (gamma * ((x.x * x.x).sum(-1)[:, None] + (y.x * y.x).sum(-1)[None, :] + 2 * (x.x.abs() @ y.x.abs().t())) + gamma * d2 + 1)
        fam.add("rbf_kernel_" + tag, "rbf_kernel", [x, y], [out(k, F32, scale=s, n=d + 1)], gamma=gamma)
    x, y = Input(U(3, 4, dtype=F64)), Input(U(2, 4, dtype=F64))
    diff = x.x[:, None, :] - y.x[None, :, :]
    d2 = (diff * diff).sum(-1)
    k = torch.exp(-0.3 * d2)
    s = k * (0.3 * ((x.x * x.x).sum(-1)[:, None] + (y.x * y.x).sum(-1)[None, :] + 2 * (x.x.abs() @ y.x.abs().t())) + 0.3 * d2 + 1)
    fam.add("rbf_kernel_f64", "rbf_kernel", [x, y], [out(k, F64, scale=s, n=5)], gamma=0.3)
    # affine_grid.
    for tag, size in (("2x3x4x5", [2, 3, 4, 5]), ("1x1x1x1", [1, 1, 1, 1]), ("1x2x7x3", [1, 2, 7, 3])):
        for ac in (False, True):
            th = Input(U(size[0], 2, 3))
            g = F.affine_grid(th.x, size, align_corners=ac)
            base = F.affine_grid(torch.tensor([[[1.0, 0, 0], [0, 1.0, 0]]], dtype=F64).expand(size[0], 2, 3), size, align_corners=ac)
            bx, by = base[..., 0].abs(), base[..., 1].abs()
            tha = th.x.abs()
            s = torch.stack([tha[:, 0, 0, None, None] * (bx + 1) + tha[:, 0, 1, None, None] * (by + 1) + tha[:, 0, 2, None, None],
                             tha[:, 1, 0, None, None] * (bx + 1) + tha[:, 1, 1, None, None] * (by + 1) + tha[:, 1, 2, None, None]], -1)
            fam.add("affine_grid_%s_ac%d" % (tag, ac), "affine_grid", [th], [out(g, F32, scale=s, n=3)], size=size, align_corners=ac)
    # grid_sample (bilinear).
    for tag, xs, gs in (("2x3x5x6_grid4x7", (2, 3, 5, 6), (2, 4, 7)), ("1x1x4x4_grid3x3", (1, 1, 4, 4), (1, 3, 3)),
                        ("1x2x1x5_grid2x6", (1, 2, 1, 5), (1, 2, 6))):
        for pad in ("zeros", "border"):
            for ac in (False, True):
                x = Input(U(*xs))
                g = Input(U(*gs, 2, lo=-1.2, hi=1.2))
                y = F.grid_sample(x.x, g.x, mode="bilinear", padding_mode=pad, align_corners=ac)
                H, W = xs[2], xs[3]
                plane = x.x.abs().amax(dim=(2, 3), keepdim=True)
                s = plane.expand(y.shape) * (H + W + 4)
                fam.add("grid_sample_%s_%s_ac%d" % (tag, pad, ac), "grid_sample", [x, g], [out(y, F32, scale=s, n=4)],
                        padding_mode=pad, align_corners=ac)
    for ac in (False, True):
        for pad in ("zeros", "border"):
            x = Input(U(1, 2, 3, 4))
            g = Input(T([[[[-1, -1], [1, 1], [0, 0], [1, -1]], [[-1, 1], [0.5, -0.5], [-1.0, 0.25], [1.0, 0.0]]]]))
            y = F.grid_sample(x.x, g.x, mode="bilinear", padding_mode=pad, align_corners=ac)
            fam.add("grid_sample_edges_%s_ac%d" % (pad, ac), "grid_sample", [x, g],
                    [out(y, F32, scale=x.x.abs().amax().item() * 11, n=4)], padding_mode=pad, align_corners=ac)
    # Exact pixel-centre sampling and an identity grid.
    x = Input(U(1, 2, 3, 4))
    th = torch.tensor([[[1.0, 0, 0], [0, 1.0, 0]]], dtype=F64)
    gi = Input(F.affine_grid(th, [1, 2, 3, 4], align_corners=False).to(F32))
    y = F.grid_sample(x.x, gi.x, mode="bilinear", padding_mode="zeros", align_corners=False)
    fam.add("grid_sample_identity", "grid_sample", [x, gi],
            [out(y, F32, scale=x.x.abs().amax().item() * 11, n=4)], padding_mode="zeros", align_corners=False)
    x = Input(U(1, 3, 4, 5, dtype=F64))
    g = Input(U(1, 3, 3, 2, lo=-1.1, hi=1.1, dtype=F64))
    y = F.grid_sample(x.x, g.x, mode="bilinear", padding_mode="border", align_corners=True)
    fam.add("grid_sample_f64", "grid_sample", [x, g], [out(y, F64, scale=x.x.abs().amax().item() * 13, n=4)],
            padding_mode="border", align_corners=True)
    x = Input(U(1, 5, 4, 2), [{"permute": [0, 3, 1, 2]}])
    g = Input(U(1, 3, 2, 2, lo=-1, hi=1))
    y = F.grid_sample(x.x, g.x, mode="bilinear", padding_mode="zeros", align_corners=False)
    fam.add("grid_sample_permuted_input", "grid_sample", [x, g], [out(y, F32, scale=x.x.abs().amax().item() * 13, n=4)],
            padding_mode="zeros", align_corners=False)
    return fam


# ============================================================== creation

def gen_creation():
    fam = Family("creation")
    for shape in ([2, 3], [0], [7], [], [1, 1025]):
        tag = "x".join(str(s) for s in shape) or "rank0"
        fam.add("zeros_" + tag, "zeros", [], [out(torch.zeros(shape, dtype=F64), F32)], shape=shape)
        fam.add("ones_" + tag, "ones", [], [out(torch.ones(shape, dtype=F64), F32)], shape=shape)
    for tag, dt, v, shape in (("f32", "float32", 2.5, [2, 2]), ("f32_third", "float32", 1 / 3, [3]),
                              ("i32", "int32", 7.0, [3]), ("i32_neg", "int32", -2.0, [2, 2]),
                              ("f64", "float64", 1 / 3, [2]), ("f16", "float16", 1 / 3, [2]),
                              ("f32_inf", "float32", INF, [2]), ("f32_nan", "float32", NAN, [2]), ("empty", "float32", 1.0, [0, 2])):
        y = torch.full(shape, v, dtype=F64)
        fam.add("full_" + tag, "full", [], [out(y, dt)], dtype=dt, value=enc_float(v), shape=shape)
    for tag, dt, start, end, step in (("0_10", "float32", 0, 10, 1), ("0_1_by_0.1", "float32", 0, 1, 0.1),
                                      ("neg_step", "float32", 5, -3, -1.5), ("i32", "int32", 0, 7, 2),
                                      ("i32_neg", "int32", 3, -4, -3), ("1025", "float32", 0, 1025, 1),
                                      ("frac", "float32", -1.25, 2.5, 0.3), ("empty", "float32", 3, 3, 1),
                                      ("f64", "float64", 0, 1, 0.125), ("large_offset", "float32", 1e6, 1e6 + 20, 3)):
        n = max(0, math.ceil((end - start) / step))
        i = torch.arange(n, dtype=F64)
        y = start + i * step
        s = abs(start) + (i * step).abs()
        fam.add("arange_" + tag, "arange", [], [out(y, dt, scale=s, n=2)], dtype=dt, start=start, end=end, step=step)
        assert n == torch.arange(start, end, step, dtype=NAME_DTYPE[dt]).numel(), tag
    for tag, start, end, n in (("0_1_7", 0, 1, 7), ("neg3_5_1025", -3, 5, 1025), ("single", 2, 2, 1), ("one_point", -1, 4, 1),
                               ("empty", 0, 1, 0), ("two", -1, 1, 2), ("reverse", 10, -10, 9)):
        if n == 1:
            y = torch.tensor([float(start)], dtype=F64)
        else:
            step = (end - start) / (n - 1) if n > 1 else 0.0
            i = torch.arange(n, dtype=F64)
            y = torch.where(i < n // 2, start + i * step, end - (n - 1 - i) * step)
        s = torch.full((n,), max(abs(start), abs(end)), dtype=F64)
        fam.add("linspace_" + tag, "linspace", [], [out(y, F32, scale=s, n=2)], start=start, end=end, steps=n)
    for n, m in ((3, 3), (4, 2), (1, 5), (0, 3), (1, 1), (33, 33)):
        fam.add("eye_%dx%d" % (n, m), "eye", [], [out(torch.eye(n, m, dtype=F64), F32)], n=n, m=m)
    x = Input(U(3, 4))
    fam.add("zeros_like_f32", "zeros_like", [x], [out(torch.zeros(3, 4, dtype=F64), F32)])
    x = Input(I(2, 5))
    fam.add("ones_like_i32", "ones_like", [x], [out(torch.ones(2, 5, dtype=torch.int64), I32)])
    x = Input(U(2, 3, dtype=F64))
    fam.add("full_like_f64", "full_like", [x], [out(torch.full((2, 3), -1.5, dtype=F64), F64)], value=-1.5)
    x = Input(U(5, 2), [{"transpose": [0, 1]}])
    fam.add("ones_like_transposed", "ones_like", [x], [out(torch.ones(2, 5, dtype=F64), F32)])
    return fam


# ============================================================== autograd
#
# Golden gradients for composite graphs (graph/golden_test.go): one small
# model per op family, built in PyTorch from the same primitives the Go test
# records, differentiated in float64. They go to testdata/golden/autograd/
# (not next to the op files: tensor/golden_test.go reads every *.json here
# as an op family) in their own format:
#
#     {"family": F, "torch": VERSION, "cases": [CASE, ...]}
#     CASE = {"name", "model", "dtype", "args": {model parameters},
#             "inputs": {NAME: INPUT}, "outputs": {NAME: OUTPUT}}
#
# INPUT and OUTPUT are as above (no views, no scales). Outputs are "loss",
# "<input>.grad" for every input that requires a gradient, and for
# batch norm the updated "running_mean" and "running_var". Each model has a
# float64 case and a float32 case; the float32 inputs are float32 numbers
# and the expected values are computed from them in float64 and rounded
# once to float32.
#
# The draws come from a generator of their own, so that the op families
# above stay byte-for-byte the same. A draw is rejected (and the next seed
# tried) when a ReLU input or a gap between a max-pool window's two largest
# values is within MARGIN of a kink: there float32 rounding could flip the
# branch on one device and not another, and the gradient would jump.

MARGIN = 1e-3


class Draw:
    """Seeded draws in float64, rounded to the case's dtype by the caller."""

    def __init__(self, seed):
        self.gen = torch.Generator().manual_seed(seed)

    def u(self, *shape, lo=-1.0, hi=1.0):
        return torch.rand(shape, generator=self.gen, dtype=F64) * (hi - lo) + lo

    def n(self, *shape, mean=0.0, std=1.0):
        return torch.randn(shape, generator=self.gen, dtype=F64) * std + mean

    def i(self, *shape, hi):
        return torch.randint(0, hi, shape, generator=self.gen, dtype=torch.int64)


def ag_draw(model, seed, draw, check):
    """The draw from the first seed from seed on that passes check (deterministic)."""
    for k in range(1000):
        d = draw(Draw(seed + k))
        if check(d):
            return d
    raise RuntimeError("autograd %s: no draw clear of kinks" % model)


def ag_case(name, model, dtype, values, grads, fn, args=None, extra=None):
    """Runs fn on the inputs rounded to dtype, as float64 leaves, and returns the case.

    values: {name: float64 or int64 tensor}; grads: names that require a gradient;
    fn(inputs) -> (loss, {output name: tensor}) of extra outputs."""
    ins = {}
    leaves = {}
    for k, v in values.items():
        t = v.to(dtype) if v.is_floating_point() else v.to(I32)
        ins[k] = {"dtype": DTYPE_NAME[t.dtype], "shape": list(t.shape), "data": enc(t)}
        x = hi(t)
        if k in grads:
            x = x.detach().clone().requires_grad_(True)
        leaves[k] = x
    loss, more = fn(leaves)
    gs = torch.autograd.grad(loss, [leaves[k] for k in grads])
    outs = {"loss": out(loss.detach(), dtype)}
    for k, g in zip(grads, gs):
        outs[k + ".grad"] = out(g, dtype)
    for k, v in more.items():
        outs[k] = out(v.detach(), dtype)
    # PyTorch's own float32 answer must pass the Go test's float32 tolerance
    # (graph/golden_test.go: |Δ| ≤ 1e-4·max|want| + 1e-6 per output, or
    # 5e-5 for an output that is zero in exact arithmetic) with room to
    # spare: worst is the largest fraction of it PyTorch uses.
    worst = 0.0
    if dtype == F32:
        lo = {k: (v.detach().to(F32).requires_grad_(k in grads) if v.is_floating_point() else v) for k, v in leaves.items()}
        loss32, more32 = fn(lo)
        gs32 = torch.autograd.grad(loss32, [lo[k] for k in grads])
        pairs = [(loss32, loss)] + list(zip(gs32, gs)) + [(more32[k], more[k]) for k in more]
        for got, want in pairs:
            want = want.detach()
            err = (got.detach().to(F64) - want).abs().max().item()
            m = want.abs().max().item()
            worst = max(worst, err / (5e-5 if m < 1e-12 else 1e-4 * m + 1e-6))
        assert worst < 0.1, (name, worst)
    c = {"name": name, "model": model, "dtype": DTYPE_NAME[dtype]}
    if args:
        c["args"] = args
    c["inputs"] = ins
    c["outputs"] = outs
    return c, worst


class AutogradFamily:
    def __init__(self, name):
        self.name = name
        self.cases = []

    def add(self, case):
        c, worst = case
        assert c["name"] not in [x["name"] for x in self.cases], c["name"]
        self.cases.append(c)
        if c["dtype"] == "float32":
            print("  %-28s PyTorch's float32 run uses %.2g of the float32 tolerance" % (c["name"], worst))

    def write(self):
        d = os.path.join(OUT_DIR, "autograd")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, self.name + ".json")
        with open(path, "w") as f:
            f.write('{"family":%s,"torch":%s,"cases":[\n' % (json.dumps(self.name), json.dumps(torch.__version__)))
            f.write(",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in self.cases))
            f.write("\n]}\n")
        return path, len(self.cases), os.path.getsize(path)


def linear(x, w, b):
    """x·wᵀ + b, as the Go test builds it (MatMul(x, w.T()) + b)."""
    return x @ w.t() + b


def gen_autograd_mlp():
    """13-16-8-5 MLP, batch 7, softmax cross-entropy from log_softmax and gather."""
    fam = AutogradFamily("mlp")
    sizes = [13, 16, 8, 5]
    B = 7

    def draw(r):
        v = {"x": r.n(B, sizes[0])}
        for l in range(3):
            bound = 1 / math.sqrt(sizes[l])
            v["w%d" % (l + 1)] = r.u(sizes[l + 1], sizes[l], lo=-bound, hi=bound)
            v["b%d" % (l + 1)] = r.u(sizes[l + 1], lo=-bound, hi=bound)
        v["labels"] = r.i(B, hi=sizes[-1])
        return v

    def pre(v):
        a1 = linear(v["x"], v["w1"], v["b1"])
        a2 = linear(torch.relu(a1), v["w2"], v["b2"])
        return a1, a2

    def check(v):
        # Both dtypes' inputs must be clear of the ReLU kink.
        for dt in (F64, F32):
            vv = {k: (hi(t.to(dt)) if t.is_floating_point() else t) for k, t in v.items()}
            if min(a.abs().min().item() for a in pre(vv)) < MARGIN:
                return False
        return True

    def fn(v):
        a1 = linear(v["x"], v["w1"], v["b1"])
        a2 = linear(torch.relu(a1), v["w2"], v["b2"])
        z = linear(torch.relu(a2), v["w3"], v["b3"])
        lp = F.log_softmax(z, 1).gather(1, v["labels"][:, None])
        loss = -lp.mean()
        assert torch.allclose(loss.detach(), F.cross_entropy(z.detach(), v["labels"]).to(loss.dtype), rtol=1e-5)
        return loss, {}

    v = ag_draw("mlp", 20253117, draw, check)
    grads = ["x", "w1", "b1", "w2", "b2", "w3", "b3"]
    for dt, tag in ((F64, "f64"), (F32, "f32")):
        fam.add(ag_case("mlp_13_16_8_5_b7_" + tag, "mlp", dt, v, grads, fn, args={"sizes": sizes}))
    return fam


def gen_autograd_conv_bn():
    """conv2d (3→4, 3×3, padding 1) → batch_norm (training) → relu → max_pool2d 2×2 on [2, 3, 6, 6]."""
    fam = AutogradFamily("conv_bn")
    momentum, eps = 0.1, 1e-5
    args = {"padding": 1, "momentum": momentum, "eps": eps, "pool": 2}

    def draw(r):
        bound = 1 / math.sqrt(3 * 9)
        return {
            "x": r.n(2, 3, 6, 6),
            "conv_w": r.u(4, 3, 3, 3, lo=-bound, hi=bound),
            "conv_b": r.u(4, lo=-bound, hi=bound),
            "bn_w": r.u(4, lo=0.5, hi=1.5),
            "bn_b": r.u(4, lo=-0.5, hi=0.5),
            "running_mean": r.n(4, std=0.5),
            "running_var": r.u(4, lo=0.5, hi=2.0),
            "r": r.n(2, 4, 3, 3),
        }

    def block(v):
        rm, rv = v["running_mean"].detach().clone(), v["running_var"].detach().clone()
        y = F.conv2d(v["x"], v["conv_w"], v["conv_b"], padding=1)
        y = F.batch_norm(y, rm, rv, v["bn_w"], v["bn_b"], True, momentum, eps)
        return y, rm, rv

    def check(v):
        for dt in (F64, F32):
            vv = {k: hi(t.to(dt)) for k, t in v.items()}
            y = block(vv)[0]
            if y.abs().min().item() < MARGIN:
                return False
            # The two largest values of every 2×2 window, where the largest is
            # positive (an all-negative window passes no gradient through
            # the ReLU whichever element the pool picks).
            w = torch.relu(y).unfold(2, 2, 2).unfold(3, 2, 2).reshape(2, 4, 3, 3, 4)
            top = w.topk(2, dim=-1).values
            if ((top[..., 0] > 0) & (top[..., 0] - top[..., 1] < MARGIN)).any():
                return False
        return True

    def fn(v):
        y, rm, rv = block(v)
        p = F.max_pool2d(torch.relu(y), 2)
        return (p * v["r"]).sum(), {"running_mean": rm, "running_var": rv}

    v = ag_draw("conv_bn", 20257117, draw, check)
    grads = ["x", "conv_w", "conv_b", "bn_w", "bn_b"]
    for dt, tag in ((F64, "f64"), (F32, "f32")):
        fam.add(ag_case("conv_bn_relu_pool_" + tag, "conv_bn", dt, v, grads, fn, args=args))
    return fam


def gen_autograd_attention():
    """layer_norm(8) → single-head attention (Q, K: 6 wide, V: 4 wide) on x [2, 5, 8]."""
    fam = AutogradFamily("attention")
    eps = 1e-5
    dk, dv = 6, 4
    args = {"eps": eps, "dk": dk, "dv": dv}

    def draw(r):
        bound = 1 / math.sqrt(8)
        return {
            "x": r.n(2, 5, 8, mean=0.5, std=1.5),
            "ln_w": r.u(8, lo=0.5, hi=1.5),
            "ln_b": r.u(8, lo=-0.5, hi=0.5),
            "wq": r.u(dk, 8, lo=-2 * bound, hi=2 * bound),
            "bq": r.u(dk, lo=-bound, hi=bound),
            "wk": r.u(dk, 8, lo=-2 * bound, hi=2 * bound),
            "bk": r.u(dk, lo=-bound, hi=bound),
            "wv": r.u(dv, 8, lo=-bound, hi=bound),
            "bv": r.u(dv, lo=-bound, hi=bound),
            "r": r.n(2, 5, dv),
        }

    def fn(v):
        h = F.layer_norm(v["x"], [8], v["ln_w"], v["ln_b"], eps)
        q = linear(h, v["wq"], v["bq"])
        k = linear(h, v["wk"], v["bk"])
        val = linear(h, v["wv"], v["bv"])
        a = torch.softmax(q @ k.transpose(1, 2) * (1 / math.sqrt(dk)), -1)
        return (a @ val * v["r"]).sum(), {}

    v = ag_draw("attention", 20259117, draw, lambda v: True)
    grads = ["x", "ln_w", "ln_b", "wq", "bq", "wk", "bk", "wv", "bv"]
    for dt, tag in ((F64, "f64"), (F32, "f32")):
        fam.add(ag_case("layernorm_attention_" + tag, "attention", dt, v, grads, fn, args=args))
    return fam


def main():
    if not torch.__version__.startswith("1.13"):
        print("gen.py: warning: written for PyTorch 1.13 (Debian python3-torch), running %s" % torch.__version__, file=sys.stderr)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="Since version 1.3.0, affine_grid")
    # `gen.py autograd` writes only the autograd files.
    only_autograd = sys.argv[1:] == ["autograd"]
    total = 0
    ops = (gen_elementwise, gen_unary, gen_reductions, gen_linalg, gen_shape, gen_indexing, gen_nn_conv,
           gen_nn_pool, gen_nn_norm, gen_nn_misc, gen_creation)
    for gen in (() if only_autograd else ops) + (gen_autograd_mlp, gen_autograd_conv_bn, gen_autograd_attention):
        path, n, size = gen().write()
        total += size
        print("%-40s %4d cases %8d bytes" % (os.path.relpath(path), n, size))
    print("total %d bytes" % total)


if __name__ == "__main__":
    main()
