#!/usr/bin/python3
"""PyTorch's side of `make fashion`: cmd/demo's training run on
Fashion-MNIST (or MNIST), in PyTorch 1.13 on the CPU, to set beside
`go run ./cmd/demo -device cpu -data DIR`.

    /usr/bin/python3 bench/peers/fashion.py --data DIR [--threads 2] [--epochs 3]
                                            [--batch 32] [--lr 0.01] [--seed 1]

What it mirrors (cmd/demo/train.go, nn/train):
  - the network: conv 1→16 3×3 padding 1, ReLU, max pool 2, conv 16→32,
    ReLU, max pool 2, Linear 32·7·7→64, ReLU, Linear 64→10, PyTorch's
    default initialization (webtensor's layers use the same Kaiming-uniform
    rule), from torch.manual_seed(seed);
  - pixels scaled to [0, 1], no normalization;
  - Adam (PyTorch's defaults but the rate), the rate decayed by a cosine
    from --lr to 0 over all steps, set before each step (optim.CosineWarmup
    with no warm-up);
  - batches of --batch in a fresh random order each epoch, the last one
    partial (the order's generator differs from webtensor's: the same
    policy, not the same permutation);
  - the held-out (t10k) accuracy evaluated after every epoch in batches of
    500, as nn/train's validation does;
  - the clock: from building the model to the last evaluation, as the
    demo's "s of training";
  - torch.set_num_threads(--threads), as GOMAXPROCS for the demo.

It prints the demo's last line: held-out accuracy A% (C/N) on pytorch-cpu
after E epochs, S s of training.
"""

import argparse
import gzip
import math
import os
import struct
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def read_idx(directory, name):
    """Reads an IDX file, or its .gz, as a uint8 array."""
    path = os.path.join(directory, name)
    opener = open
    if not os.path.exists(path):
        path, opener = path + ".gz", gzip.open
    with opener(path, "rb") as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(directory, prefix):
    x = read_idx(directory, prefix + "-images-idx3-ubyte").astype(np.float32) / 255
    y = read_idx(directory, prefix + "-labels-idx1-ubyte").astype(np.int64)
    return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)


def model(h, w, classes):
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * (h // 4) * (w // 4), 64), nn.ReLU(),
        nn.Linear(64, classes),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    xs, ys = load(a.data, "train")
    xt, yt = load(a.data, "t10k")
    classes = int(max(ys.max(), yt.max())) + 1
    print("data:   %s: %d training and %d held-out images of %d×%d" % (a.data, len(xs), len(xt), xs.shape[2], xs.shape[3]))
    print("device: pytorch %s cpu, %d threads" % (torch.__version__, torch.get_num_threads()))

    start = time.perf_counter()
    torch.manual_seed(a.seed)
    net = model(xs.shape[2], xs.shape[3], classes)
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    steps_per_epoch = (len(xs) + a.batch - 1) // a.batch
    total = a.epochs * steps_per_epoch
    step = 0
    correct = 0
    for epoch in range(1, a.epochs + 1):
        gen = torch.Generator().manual_seed((a.seed << 16) + epoch - 1)
        order = torch.randperm(len(xs), generator=gen)
        net.train()
        loss_sum = 0.0
        for i in range(0, len(xs), a.batch):
            idx = order[i:i + a.batch]
            for g in opt.param_groups:
                g["lr"] = a.lr * (1 + math.cos(math.pi * step / total)) / 2
            opt.zero_grad()
            loss = F.cross_entropy(net(xs[idx]), ys[idx])
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(idx)
            step += 1
        net.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(xt), 500):
                correct += int((net(xt[i:i + 500]).argmax(1) == yt[i:i + 500]).sum())
        print("epoch %d: loss %.4f, held-out accuracy %.2f%%" % (epoch, loss_sum / len(xs), 100 * correct / len(xt)), flush=True)
    elapsed = time.perf_counter() - start
    print("held-out accuracy %.2f%% (%d/%d) on pytorch-cpu after %d epochs, %.1f s of training"
          % (100 * correct / len(xt), correct, len(xt), a.epochs, elapsed))


if __name__ == "__main__":
    main()
