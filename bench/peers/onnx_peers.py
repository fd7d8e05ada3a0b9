#!/usr/bin/python3
"""PyTorch eager (CPU) peer of onnx's BenchmarkExportedModels (peers.py
runs the same models as its onnx/ cases, for make bench's report): the models
of testdata/golden/gen_onnx.py at the same input shapes, batch 1 and 32,
inference under torch.no_grad in eval mode; prints the median latency of
each in ms.

    /usr/bin/python3 bench/peers/onnx_peers.py [--threads 2] [--min-time 1]
"""
import argparse
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "golden"))
import gen_onnx  # noqa: E402
from torchvision.models import mobilenet_v2  # noqa: E402


def model(name):
    """The module and an input maker (batch → tensor) for a model name."""
    if name == "mlp":
        return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 7)), lambda b: torch.randn(b, 20)
    if name == "resnet18":
        return gen_onnx.SmallResNet18(), lambda b: torch.randn(b, 3, 40, 40)
    if name == "mobilenetv2":
        return mobilenet_v2(width_mult=0.25, num_classes=10), lambda b: torch.randn(b, 3, 40, 40)
    if name == "transformer":
        return gen_onnx.Encoder(), lambda b: torch.randint(0, 50, (b, 12))
    raise ValueError("no model %r" % name)


def models():
    for name in ("mlp", "resnet18", "mobilenetv2", "transformer"):
        yield (name,) + model(name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", type=float, default=1.0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {a.threads} threads")
    for name, model, make in models():
        model.eval()
        for batch in (1, 32):
            x = make(batch)
            with torch.no_grad():
                for _ in range(3):
                    model(x)
                times, start = [], time.perf_counter()
                while time.perf_counter() - start < a.min_time or len(times) < 5:
                    t = time.perf_counter()
                    model(x)
                    times.append(time.perf_counter() - t)
            times.sort()
            print(f"{name}/batch{batch}: {times[len(times) // 2] * 1e3:.3f} ms ({len(times)} runs)")


if __name__ == "__main__":
    main()
