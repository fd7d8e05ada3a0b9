#!/usr/bin/python3
"""Golden data for Int64 in checkpoints: a PyTorch-written safetensors file
of a small model with an embedding and BatchNorm layers, which package
nn/checkpoint must load strictly (num_batches_tracked, an I64 scalar,
included) and whose outputs it must reproduce; and a file of the dtypes
Read converts (I64 extremes, BF16).

Debian has no `safetensors` package, so the format is written by hand, as
in gen_safetensors.py: an 8-byte little-endian header length, the JSON
header (names sorted, "dtype", "shape", "data_offsets"), then the raw
little-endian row-major bytes.

Usage (Debian's python3-torch 1.13; no numpy needed):

    /usr/bin/python3 testdata/golden/gen_int64.py

writes, under testdata/golden/nn/:
    int64_model.safetensors   the trained model's state_dict (F32, I64)
    int64_dtypes.safetensors  I64 extremes and BF16 specials
    int64.json                the architecture, eval inputs and PyTorch's
                              eval outputs, one more training batch with its
                              outputs and the running statistics after it,
                              and the expected values of int64_dtypes
"""

import json
import os
import struct

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "nn")

# format name -> (bit-view integer dtype, struct code)
CODES = {
    torch.float32: ("F32", torch.int32, "i"),
    torch.int64: ("I64", torch.int64, "q"),
    torch.bfloat16: ("BF16", torch.int16, "h"),
}

VOCAB, DIM, HIDDEN, CIN, COUT, SIDE = 11, 6, 5, 2, 3, 5


class Net(nn.Module):
    """Embedding → mean over the sequence → Linear → BatchNorm1d → ReLU →
    BatchNorm1d(momentum=None); Conv2d → BatchNorm2d on an image."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.fc = nn.Linear(DIM, HIDDEN)
        self.bn = nn.BatchNorm1d(HIDDEN)
        self.bn_avg = nn.BatchNorm1d(HIDDEN, momentum=None)
        self.conv = nn.Conv2d(CIN, COUT, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(COUT)

    def forward(self, ids, img):
        e = self.emb(ids).mean(1)
        h = self.bn_avg(torch.relu(self.bn(self.fc(e))))
        c = self.bn2(self.conv(img))
        return h, c


def to_bytes(t):
    _, itype, code = CODES[t.dtype]
    ints = t.contiguous().view(itype).reshape(-1).tolist()
    return struct.pack("<%d%s" % (len(ints), code), *ints)


def serialize(tensors):
    parts, data, offset = [], [], 0
    for name in sorted(tensors):
        t = tensors[name]
        raw = to_bytes(t)
        shape = ",".join(str(d) for d in t.shape)
        parts.append('"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
                     % (name, CODES[t.dtype][0], shape, offset, offset + len(raw)))
        data.append(raw)
        offset += len(raw)
    header = ("{" + ",".join(parts) + "}").encode("utf-8")
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + b"".join(data)


def flat(t):
    return [float(x) for x in t.detach().reshape(-1).tolist()]


def batch(gen, n, seq):
    ids = torch.randint(0, VOCAB, (n, seq), generator=gen, dtype=torch.int64)
    img = torch.randn(n, CIN, SIDE, SIDE, generator=gen)
    return ids, img


def main():
    torch.manual_seed(16)
    gen = torch.Generator().manual_seed(1616)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for step in range(3):  # running stats move, num_batches_tracked = 3
        ids, img = batch(gen, 6, 4)
        img = img + step  # batches of different means
        h, c = model(ids, img)
        loss = h.square().mean() + c.square().mean() + h.sum() * 0.1
        opt.zero_grad()
        loss.backward()
        opt.step()

    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    assert state["bn.num_batches_tracked"].dtype == torch.int64
    with open(os.path.join(OUT, "int64_model.safetensors"), "wb") as f:
        f.write(serialize(state))

    model.eval()
    ids, img = batch(gen, 4, 7)
    with torch.no_grad():
        h, c = model(ids, img)
    golden = {
        "file": "int64_model.safetensors",
        "config": {"vocab": VOCAB, "dim": DIM, "hidden": HIDDEN, "cin": CIN, "cout": COUT},
        "state": sorted(state),
        "num_batches_tracked": int(state["bn.num_batches_tracked"]),
        "eval": {"ids": ids.reshape(-1).tolist(), "ids_shape": list(ids.shape),
                 "img": flat(img), "img_shape": list(img.shape),
                 "h": flat(h), "h_shape": list(h.shape), "c": flat(c), "c_shape": list(c.shape)},
    }

    # One more training batch: PyTorch's counting and its cumulative
    # average (bn_avg, momentum=None) against an exponential one (bn).
    model.train()
    ids, img = batch(gen, 5, 3)
    with torch.no_grad():
        h, c = model(ids, img)
    golden["train"] = {
        "ids": ids.reshape(-1).tolist(), "ids_shape": list(ids.shape),
        "img": flat(img), "img_shape": list(img.shape),
        "h": flat(h), "c": flat(c),
        "num_batches_tracked": int(model.bn_avg.num_batches_tracked),
        "running": {name: flat(getattr(model, layer).__getattr__(stat))
                    for layer in ("bn", "bn_avg", "bn2")
                    for stat in ("running_mean", "running_var")
                    for name in [layer + "." + stat]},
    }

    # Dtypes Read converts: I64 at the extremes, BF16 specials (−0, ±Inf,
    # NaN, a subnormal, the largest finite, 1/3 rounded).
    i64 = torch.tensor([-(2 ** 63), 2 ** 63 - 1, -1, 0, 2 ** 40 + 1, -(2 ** 53) - 1], dtype=torch.int64)
    bf16 = torch.tensor([1.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-40, 3.3895e38, 1 / 3],
                        dtype=torch.float32).to(torch.bfloat16).reshape(2, 4)
    small = torch.tensor([-5, 2 ** 31 - 1, -(2 ** 31)], dtype=torch.int64)
    with open(os.path.join(OUT, "int64_dtypes.safetensors"), "wb") as f:
        f.write(serialize({"bf16": bf16, "i64": i64, "small": small}))
    golden["dtypes"] = {
        "file": "int64_dtypes.safetensors",
        "i64": i64.tolist(),
        "small": small.tolist(),
        "bf16_shape": list(bf16.shape),
        # bfloat16 widened by torch: the float32 bit patterns Read must give.
        "bf16_f32_bits": [x & 0xFFFFFFFF for x in bf16.float().view(torch.int32).reshape(-1).tolist()],
    }

    with open(os.path.join(OUT, "int64.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
