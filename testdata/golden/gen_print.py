#!/usr/bin/python3
"""Writes testdata/golden/nn/print.json: PyTorch's printed forms of tensors
and modules, for tensor.Tensor's fmt.Formatter and nn.Format.

Run with Debian's python3-torch (`/usr/bin/python3 testdata/golden/gen_print.py`);
no other packages. Deterministic: every draw comes from a seeded generator.

File format:

    {"torch": VERSION, "tensors": [TENSOR, ...], "modules": [MODULE, ...]}

    TENSOR = {"name": str, "dtype": "float32" | "float64" | "int32" | "float16",
              "shape": [...], "data": [str, ...],   # row-major, Python repr
                                                     # ("nan", "inf" parse in Go)
              "precision", "threshold", "edgeitems", "linewidth": int,
                                                     # torch.set_printoptions
              "requires_grad": bool,
              "repr": {device name: str}}            # "cpu", "webgpu:0", "webgpu:1"
    MODULE = {"name": str, "repr": str}             # the Go test builds the same

A tensor on another device prints with a device='…' suffix; torch cannot
make a webgpu tensor, so those forms come from torch's own repr code
(torch._tensor_str._tensor_str and _add_suffixes) with that suffix added,
exactly as _str_intern adds device suffixes for a CUDA tensor.

The dtype suffix says "int32" where torch says "torch.int32": the Go
package's dtypes print without the module prefix; the script strips it.
"""

import json
import math
import os

import torch
import torch._tensor_str as ts

DTYPES = {"float32": torch.float32, "float64": torch.float64,
          "int32": torch.int32, "float16": torch.float16}


def device_repr(t, device):
    """torch's repr of t, as if it lived on device."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = ["device='%s'" % device]
    if t.numel() == 0:
        body = "[]"
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype != torch.float32:
            suffixes.append("dtype=" + str(t.dtype))
    else:
        body = ts._tensor_str(t, indent)
        if t.dtype not in (torch.float32, torch.int64, torch.bool):
            suffixes.append("dtype=" + str(t.dtype))
    if t.requires_grad:
        suffixes.append("requires_grad=True")
    return ts._add_suffixes(prefix + body, suffixes, indent, force_newline=False)


def strip(s):
    return s.replace("torch.", "")


def tensor_case(name, t, precision=4, threshold=1000, edgeitems=3, linewidth=80):
    torch.set_printoptions(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)
    reprs = {"cpu": strip(repr(t))}
    for dev in ("webgpu:0", "webgpu:1"):
        reprs[dev] = strip(device_repr(t, dev))
    # The check that device_repr is torch's own: on the CPU it must agree.
    cpu_suffix_free = strip(repr(t))
    assert cpu_suffix_free.startswith("tensor(")
    torch.set_printoptions(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    dtype = [k for k, v in DTYPES.items() if v == t.dtype][0]
    data = [repr(float(v)) if t.dtype.is_floating_point else str(int(v))
            for v in t.detach().reshape(-1).tolist()]
    return {"name": name, "dtype": dtype, "shape": list(t.shape), "data": data,
            "precision": precision, "threshold": threshold, "edgeitems": edgeitems,
            "linewidth": linewidth, "requires_grad": t.requires_grad, "repr": reprs}


def tensor_cases():
    g = torch.Generator().manual_seed(16)
    randn = lambda *s, dtype=torch.float32: torch.randn(*s, generator=g, dtype=torch.float64).to(dtype)
    cases = [
        tensor_case("small_whole_floats", torch.tensor([[1.0, 2.0], [3.0, 4.0]])),
        tensor_case("fixed_2x3", randn(2, 3)),
        tensor_case("fixed_odd_5x7", randn(5, 7)),
        tensor_case("mixed_magnitudes_sci", randn(3, 4) * torch.tensor([1e-5, 1.0, 1e3, 10.0])),
        tensor_case("large_values_sci", randn(4) * 1e9),
        tensor_case("whole_wide_range_sci", torch.tensor([1.0, 20000.0, -3.0])),
        tensor_case("tiny_values_sci", randn(5) * 1e-6),
        tensor_case("nonfinite", torch.tensor([1.5, float("nan"), float("inf"), -float("inf"), 0.0, -2.25])),
        tensor_case("nonfinite_whole", torch.tensor([2.0, float("nan"), -float("inf")])),
        tensor_case("all_zero", torch.zeros(2, 3)),
        tensor_case("negative_zero", torch.tensor([-0.0, 1.5])),
        tensor_case("int32", torch.randint(-1000, 1000, (3, 5), generator=g, dtype=torch.int32)),
        tensor_case("int32_scalar", torch.tensor(-7, dtype=torch.int32)),
        tensor_case("scalar", torch.tensor(3.14159)),
        tensor_case("scalar_whole", torch.tensor(42.0)),
        tensor_case("float64", randn(2, 2, dtype=torch.float64)),
        tensor_case("float16", randn(2, 3, dtype=torch.float16)),
        tensor_case("long_row_wraps", randn(31)),
        tensor_case("wide_matrix_wraps", randn(2, 13)),
        tensor_case("three_d", randn(2, 3, 4)),
        tensor_case("four_d", randn(2, 1, 2, 3)),
        tensor_case("elided_vector", randn(2001)),
        tensor_case("elided_matrix", randn(41, 53)),
        tensor_case("elided_rows_only", randn(500, 3)),
        tensor_case("elided_3d", randn(11, 10, 12)),
        tensor_case("elided_int32", torch.arange(0, 1200, dtype=torch.int32).reshape(40, 30)),
        tensor_case("empty_vector", torch.zeros(0)),
        tensor_case("empty_matrix", torch.zeros(2, 0)),
        tensor_case("empty_int32", torch.zeros(0, dtype=torch.int32)),
        tensor_case("precision_2", randn(2, 3), precision=2),
        tensor_case("precision_7", randn(3), precision=7),
        tensor_case("precision_2_sci", randn(3) * 1e6, precision=2),
        tensor_case("requires_grad", randn(2, 2).requires_grad_()),
        tensor_case("options_small_threshold", randn(4, 9), threshold=10, edgeitems=2, linewidth=40),
        tensor_case("options_narrow_lines", randn(17) * 100, linewidth=50),
    ]
    return cases


class Block(torch.nn.Module):
    """A custom module with named children and a parameter of its own, as
    nn.Base's example builds it."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.scale = torch.nn.Parameter(torch.ones(16, 1, 1))


def module_cases():
    nn = torch.nn
    mods = {
        "mlp": nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10, bias=False)),
        "cnn": nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, (3, 5), stride=2, dilation=(1, 2), groups=2, bias=False),
            nn.AvgPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.25),
            nn.Linear(16, 4)),
        "transposed": nn.Sequential(
            nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
            nn.Tanh(), nn.Sigmoid(), nn.GELU(), nn.GELU(approximate="tanh"), nn.SiLU(),
            nn.LeakyReLU(0.2)),
        "norms": nn.Sequential(nn.Embedding(100, 16), nn.LayerNorm(16), nn.BatchNorm1d(16)),
        "nested": nn.Sequential(nn.Sequential(nn.Linear(3, 4), nn.ReLU()), nn.Linear(4, 2)),
        "attention": nn.MultiheadAttention(8, 2, batch_first=True),
        "empty_sequential": nn.Sequential(),
        "custom_block": nn.Sequential(Block(), nn.ReLU()),
        "sequence_layers": nn.Sequential(
            nn.GroupNorm(3, 6), nn.GroupNorm(2, 4, eps=1e-3, affine=False),
            nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, bias=False), nn.Conv1d(3, 5, 1),
            nn.LSTM(10, 20, num_layers=2, batch_first=True, bidirectional=True), nn.LSTM(4, 6),
            nn.GRU(5, 7, bias=False, dropout=0.5, num_layers=2)),
        "encoder_layer": nn.TransformerEncoderLayer(12, 3, dim_feedforward=20, dropout=0.0, batch_first=True),
    }
    return [{"name": k, "repr": repr(v)} for k, v in mods.items()]


def main():
    out = {"torch": torch.__version__, "tensors": tensor_cases(), "modules": module_cases()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "print.json")
    # One case per line: the data arrays are long, and a diff then names
    # the cases that changed.
    with open(path, "w") as f:
        f.write('{"torch": %s,\n' % json.dumps(out["torch"]))
        for key in ("tensors", "modules"):
            f.write(' "%s": [\n  ' % key)
            f.write(",\n  ".join(json.dumps(c) for c in out[key]))
            f.write("\n ]%s\n" % ("," if key == "tensors" else ""))
        f.write("}\n")


if __name__ == "__main__":
    main()
