#!/usr/bin/python3
"""The benchmark suite's peers: PyTorch and NumPy on the same cases as
`go run ./bench`, under the same names, timed the same way, written in the
same JSON schema (bench/schema/schema.go), so that `go run ./bench/report`
can put them side by side.

    /usr/bin/python3 bench/peers/peers.py [--threads 1,2] [--quick] [--filter RE]
                                          [--json out.json] [--min-time 1] [--list]
    /usr/bin/python3 bench/peers/peers.py --cuda [--json out.json]

On the CPU each thread count runs in its own process, with
torch.set_num_threads(T) and OPENBLAS_NUM_THREADS=T (NumPy's BLAS reads it
once, at load), so that both peers use T threads. Where a peer can write
into a preallocated result (out=), it is timed both ways and the faster is
kept, with the variant named: the report compares us with the peer's best.

--cuda measures PyTorch on the GPU: SGEMM with TF32 off, HGEMM, elementwise
ops against a device-to-device copy, and the training steps; every sample
ends with torch.cuda.synchronize().

Python 3.9+, torch 1.13, numpy 1.24; nothing else.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from datetime import datetime, timezone

SUITE, SCHEMA = "webtensor-bench", 1
GFLOPS, GBS, MS, USOP = "GFLOPS", "GB/s", "ms", "µs/op"


def count(n):
    """Names an element count as bench/cases.go's count does."""
    if n >= 10**6 and n % 10**6 == 0:
        return "%dM" % (n // 10**6)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%dM" % (n >> 20)
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return "%dK" % (n >> 10)
    return str(n)


class Case:
    """One case: make(impl, dev) returns (run, variant) pairs for one
    iteration each, or [] where the impl has no such op."""

    def __init__(self, name, group, size, unit, work, make, cuda_only=False, cpu=True):
        self.name, self.group, self.size, self.unit, self.work = name, group, size, unit, work
        self.make, self.cuda_only, self.cpu = make, cuda_only, cpu


class Lazy:
    """A module imported at first use, so that --list runs without
    loading torch."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, attr):
        import importlib
        return getattr(importlib.import_module(self.name), attr)


ONNX_MODELS = ["mlp", "resnet18", "mobilenetv2", "transformer"]


def cases(quick, cuda):
    np, torch, F = Lazy("numpy"), Lazy("torch"), Lazy("torch.nn.functional")

    def rand(dev, *shape):
        g = torch.Generator().manual_seed(1)
        return torch.randn(*shape, generator=g).to(dev)

    def nrand(*shape):
        return np.random.default_rng(1).standard_normal(shape, dtype=np.float32)

    cs = []

    def matmul(group, n, dtype_name):
        def make(impl, dev):
            dtype = getattr(torch, dtype_name)
            if impl == "torch":
                a, b = rand(dev, n, n).to(dtype), rand(dev, n, n).to(dtype)
                c = torch.empty(n, n, dtype=dtype, device=dev)
                return [(lambda: a @ b, ""), (lambda: torch.mm(a, b, out=c), "out=")]
            if dtype_name != "float32":
                return []
            a, b = nrand(n, n), nrand(n, n)
            c = np.empty((n, n), np.float32)
            return [(lambda: a @ b, ""), (lambda: np.matmul(a, b, out=c), "out=")]
        return Case("%s/%d" % (group, n), group, n, GFLOPS, 2.0 * n**3, make,
                    cuda_only=dtype_name != "float32")

    for n in ([64, 128] if quick else [256, 512, 1024, 2048, 4096]):
        cs.append(matmul("matmul", n, "float32"))
    for n in ([64] if quick else [1024, 2048, 4096]):
        cs.append(matmul("matmul-f16", n, "float16"))

    batch, side = (4, 32) if quick else (64, 256)

    def bmm(impl, dev):
        if impl == "torch":
            a, b = rand(dev, batch, side, side), rand(dev, batch, side, side)
            c = torch.empty(batch, side, side, device=dev)
            return [(lambda: torch.bmm(a, b), ""), (lambda: torch.bmm(a, b, out=c), "out=")]
        a, b = nrand(batch, side, side), nrand(batch, side, side)
        c = np.empty((batch, side, side), np.float32)
        return [(lambda: a @ b, ""), (lambda: np.matmul(a, b, out=c), "out=")]
    cs.append(Case("bmm/%dx%d" % (batch, side), "bmm", side, GFLOPS, 2.0 * batch * side**3, bmm))

    convs = [(2, 8, 8, 8, 3), (2, 16, 8, 8, 1)] if quick else [
        (8, 64, 64, 56, 3), (8, 128, 128, 28, 3), (8, 256, 256, 14, 3), (8, 256, 64, 56, 1)]
    for (n, cin, cout, h, k) in convs:
        def conv(impl, dev, n=n, cin=cin, cout=cout, h=h, k=k):
            if impl != "torch":
                return []
            x, w = rand(dev, n, cin, h, h), rand(dev, cout, cin, k, k)
            return [(lambda: F.conv2d(x, w, padding=k // 2), "")]
        flops = 2.0 * n * cout * h * h * cin * k * k
        cs.append(Case("conv2d/n%d-%dto%d-%dx%d-k%d" % (n, cin, cout, h, h, k), "conv2d", flops, GFLOPS, flops, conv))
    for (n, cin, cout, h, k) in convs:
        def conv_backward(impl, dev, n=n, cin=cin, cout=cout, h=h, k=k):
            if impl != "torch":
                return []
            x = rand(dev, n, cin, h, h).requires_grad_()
            w = rand(dev, cout, cin, k, k).requires_grad_()
            g = rand(dev, n, cout, h, h)

            def run():
                x.grad, w.grad = None, None
                F.conv2d(x, w, padding=k // 2).backward(g)
            return [(run, "")]
        flops = 4.0 * n * cout * h * h * cin * k * k
        cs.append(Case("conv2d-backward/n%d-%dto%d-%dx%d-k%d" % (n, cin, cout, h, h, k), "conv2d-backward", flops,
                       GFLOPS, flops, conv_backward))

    convs3d = [(1, 4, 4, 4, 8, 3)] if quick else [(2, 64, 64, 8, 28, 3), (1, 32, 32, 16, 56, 3)]
    for (n, cin, cout, d, h, k) in convs3d:
        def conv3d(impl, dev, n=n, cin=cin, cout=cout, d=d, h=h, k=k):
            if impl != "torch":
                return []
            x, w = rand(dev, n, cin, d, h, h), rand(dev, cout, cin, k, k, k)
            return [(lambda: F.conv3d(x, w, padding=k // 2), "")]
        flops = 2.0 * n * cout * d * h * h * cin * k * k * k
        # Our conv3d-stack rows are the same convolution composed another
        # way (WEBTENSOR_CONV3D=stack): F.conv3d is the reference of both.
        for group in ("conv3d", "conv3d-stack"):
            cs.append(Case("%s/n%d-%dto%d-%dx%dx%d-k%d" % (group, n, cin, cout, d, h, h, k), group, flops, GFLOPS,
                           flops, conv3d))
    for (n, cin, cout, d, h, k) in convs3d:
        def conv3d_backward(impl, dev, n=n, cin=cin, cout=cout, d=d, h=h, k=k):
            if impl != "torch":
                return []
            x = rand(dev, n, cin, d, h, h).requires_grad_()
            w = rand(dev, cout, cin, k, k, k).requires_grad_()
            g = rand(dev, n, cout, d, h, h)

            def run():
                x.grad, w.grad = None, None
                F.conv3d(x, w, padding=k // 2).backward(g)
            return [(run, "")]
        flops = 4.0 * n * cout * d * h * h * cin * k * k * k
        cs.append(Case("conv3d-backward/n%d-%dto%d-%dx%dx%d-k%d" % (n, cin, cout, d, h, h, k), "conv3d-backward",
                       flops, GFLOPS, flops, conv3d_backward))

    elems = [1 << 12, 1 << 16] if quick else [1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24]
    for n in elems:
        def add(impl, dev, n=n):
            if impl == "torch":
                a, b, c = rand(dev, n), rand(dev, n), torch.empty(n, device=dev)
                return [(lambda: a + b, ""), (lambda: torch.add(a, b, out=c), "out=")]
            a, b, c = nrand(n), nrand(n), np.empty(n, np.float32)
            return [(lambda: a + b, ""), (lambda: np.add(a, b, out=c), "out=")]
        cs.append(Case("add/" + count(n), "add", n, GBS, 12.0 * n, add))
    for n in elems:
        def relu(impl, dev, n=n):
            if impl == "torch":
                a, c = rand(dev, n), torch.empty(n, device=dev)
                return [(lambda: torch.relu(a), ""), (lambda: torch.clamp(a, min=0, out=c), "out=")]
            a, c = nrand(n), np.empty(n, np.float32)
            return [(lambda: np.maximum(a, 0), ""), (lambda: np.maximum(a, 0, out=c), "out=")]
        cs.append(Case("relu/" + count(n), "relu", n, GBS, 8.0 * n, relu))
    for n in elems:
        # The device-to-device copy is the bandwidth an elementwise op
        # can hope for (bench/cases.go's copyCase is ours).
        def copy(impl, dev, n=n):
            if impl == "torch":
                a, c = rand(dev, n), torch.empty(n, device=dev)
                return [(lambda: c.copy_(a), "")]
            a, c = nrand(n), np.empty(n, np.float32)
            return [(lambda: np.copyto(c, a), "")]
        cs.append(Case("copy/" + count(n), "copy", n, GBS, 8.0 * n, copy))

    rows, cols, sum_n = (64, 128, 1 << 16) if quick else (4096, 1024, 1 << 24)
    sum_small = 1 << 12 if quick else 1 << 20

    def softmax(impl, dev):
        if impl == "torch":
            a = rand(dev, rows, cols)
            return [(lambda: torch.softmax(a, -1), "")]
        a, c = nrand(rows, cols), np.empty((rows, cols), np.float32)

        def run():
            np.subtract(a, a.max(-1, keepdims=True), out=c)
            np.exp(c, out=c)
            np.divide(c, c.sum(-1, keepdims=True), out=c)
        return [(run, "out=")]
    cs.append(Case("softmax/%dx%d" % (rows, cols), "softmax", rows * cols, GBS, 8.0 * rows * cols, softmax))

    def total(n):
        def run(impl, dev):
            if impl == "torch":
                a = rand(dev, n)
                return [(lambda: a.sum(), "")]
            a = nrand(n)
            return [(lambda: a.sum(), "")]
        return run
    for n in (sum_small, sum_n):
        cs.append(Case("sum/" + count(n), "sum", n, GBS, 4.0 * n, total(n)))

    # Sorting and scans (bench/cases_sort.go): a row-wise sort with indices
    # (NumPy: a stable argsort and the gather it implies), a 16M cumsum.
    sort_rows, sort_cols, cumsum_n = (64, 128, 1 << 16) if quick else (4096, 1024, 1 << 24)

    def sort(impl, dev):
        if impl == "torch":
            a = rand(dev, sort_rows, sort_cols)
            return [(lambda: torch.sort(a, -1), "")]
        a = nrand(sort_rows, sort_cols)

        def run():
            i = np.argsort(a, -1, kind="stable")
            return np.take_along_axis(a, i, -1), i
        return [(run, "")]
    cs.append(Case("sort/%dx%d" % (sort_rows, sort_cols), "sort", sort_rows * sort_cols, GBS,
                   12.0 * sort_rows * sort_cols, sort))

    def cumsum(impl, dev):
        if impl == "torch":
            a = rand(dev, cumsum_n)
            return [(lambda: torch.cumsum(a, 0), "")]
        a, c = nrand(cumsum_n), np.empty(cumsum_n, np.float32)
        return [(lambda: np.cumsum(a, out=c), "out=")]
    cs.append(Case("cumsum/" + count(cumsum_n), "cumsum", cumsum_n, GBS, 8.0 * cumsum_n, cumsum))

    mlp, mlp_batch = ([64, 32, 32, 10], 16) if quick else ([784, 512, 512, 10], 128)
    cnn_side, cnn_batch = (8, 8) if quick else (28, 64)
    adam_n = 1 << 16 if quick else 10_000_000

    def train_step(model, opt, dev, x, classes):
        y = (torch.arange(x.shape[0]) * 7 % classes).to(dev)

        def run():
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        return run

    def mlp_step(impl, dev):
        if impl != "torch":
            return []
        torch.manual_seed(1)
        layers = []
        for i in range(len(mlp) - 1):
            if i > 0:
                layers.append(torch.nn.ReLU())
            layers.append(torch.nn.Linear(mlp[i], mlp[i + 1]))
        model = torch.nn.Sequential(*layers).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        return [(train_step(model, opt, dev, rand(dev, mlp_batch, mlp[0]), mlp[-1]), "")]
    cs.append(Case("mlp-step/%s-b%d" % ("-".join(map(str, mlp)), mlp_batch), "train", mlp_batch, MS, 0, mlp_step))

    def cnn_step(impl, dev):
        if impl != "torch":
            return []
        torch.manual_seed(1)
        nn = torch.nn
        model = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * (cnn_side // 4) ** 2, 64), nn.ReLU(), nn.Linear(64, 10)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        return [(train_step(model, opt, dev, rand(dev, cnn_batch, 1, cnn_side, cnn_side), 10), "")]
    cs.append(Case("cnn-step/1x%dx%d-b%d" % (cnn_side, cnn_side, cnn_batch), "train", cnn_batch, MS, 0, cnn_step))

    def adam(impl, dev):
        if impl != "torch":
            return []
        p = torch.nn.Parameter(rand(dev, adam_n))
        p.grad = rand(dev, adam_n)
        opt = torch.optim.Adam([p], lr=1e-3)
        return [(opt.step, "")]
    cs.append(Case("adam/" + count(adam_n), "optim", adam_n, GBS, 28.0 * adam_n, adam))

    ops = 100 if quick else 1000

    def small(kind, n):
        def make(impl, dev):
            lib = torch if impl == "torch" else np
            if impl == "torch":
                x0 = rand(dev, n, n) if kind == "matmul" else rand(dev, n)
                b = torch.eye(n, device=dev) if kind == "matmul" else rand(dev, n)
            else:
                x0 = nrand(n, n) if kind == "matmul" else nrand(n)
                b = np.eye(n, dtype=np.float32) if kind == "matmul" else nrand(n)
            op = lib.matmul if kind == "matmul" else lib.add

            def run():
                x = x0
                for _ in range(ops):
                    x = op(x, b)
            return [(run, "")]
        return Case("smallops-%s/%dx%d" % (kind, ops, n), "smallops", n, USOP, float(ops), make)
    cs += [small("add", 256), small("matmul", 32)]

    # testdata/onnx's models (bench/cases_onnx.go): PyTorch eager
    # inference of the same architectures (onnx_peers.py builds them),
    # randomly initialised, under no_grad in eval mode.
    onnx_models, onnx_batches = (["mlp", "resnet18"], [1]) if quick else (ONNX_MODELS, [1, 32])

    def onnx_case(name, batch):
        def make(impl, dev):
            if impl != "torch":
                return []
            import onnx_peers
            torch.manual_seed(0)
            model, make_input = onnx_peers.model(name)
            model = model.eval().to(dev)
            x = make_input(batch).to(dev)

            def run():
                with torch.no_grad():
                    model(x)
            return [(run, "")]
        return Case("onnx/%s-b%d" % (name, batch), "onnx-" + name, batch, MS, 0, make)
    cs += [onnx_case(m, b) for m in onnx_models for b in onnx_batches]

    if cuda:
        return cs
    return [c for c in cs if not c.cuda_only]


def measure(run, sync, min_time, min_samples, max_samples=1000):
    """As bench/measure.go: a warm-up, a calibration, then samples of back
    to back iterations ending in one sync; median and best per iteration."""
    run()
    sync()
    per_sample = min_time / max(1, min_samples)
    iters = calibrate(per_sample, run, sync)
    samples = []
    began = time.perf_counter()
    while len(samples) < min_samples or (time.perf_counter() - began < min_time and len(samples) < max_samples):
        s = time.perf_counter()
        for _ in range(iters):
            run()
        sync()
        samples.append((time.perf_counter() - s) / iters)
    samples.sort()
    n = len(samples)
    median = samples[n // 2] if n % 2 else (samples[n // 2 - 1] + samples[n // 2]) / 2
    return median, samples[0], n, iters


def calibrate(per_sample, run, sync):
    """As calibrate in bench/measure.go: double a batch until it lasts a
    quarter of a sample, then scale it to a whole one."""
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            run()
        sync()
        took = time.perf_counter() - t
        if took >= per_sample / 4 or n >= 1 << 20:
            return max(1, min(int(n * per_sample / max(took, 1e-9)), 1 << 20))
        n *= 2


def value(unit, work, seconds):
    if seconds <= 0:
        return 0.0
    if unit in (GFLOPS, GBS):
        return work / seconds / 1e9
    if unit == USOP:
        return seconds * 1e6 / work
    return seconds * 1e3


def run_cases(args, threads):
    """Runs every selected case for each impl on one device (this
    process's thread count) and returns the results."""
    import torch
    torch.set_num_threads(threads)
    dev = "cuda" if args.cuda else "cpu"
    if args.cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        sync = torch.cuda.synchronize
        adapter, backend, kind = torch.cuda.get_device_name(0), "cuda", "discrete"
    else:
        def sync():
            pass
        adapter, backend, kind = cpu_model(), "cpu", "cpu"
    impls = ["torch"] if args.cuda else ["torch", "numpy"]
    out = []
    for c in cases(args.quick, args.cuda):
        if not re.search(args.filter, c.name):
            continue
        for impl in impls:
            r = {"case": c.name, "group": c.group, "size": c.size, "impl": impl, "device": dev,
                 "adapter": adapter, "backend": backend, "adapter_type": kind, "threads": threads, "unit": c.unit}
            try:
                variants = c.make(impl, dev)
                if not variants:
                    continue
                best = None
                for run, variant in variants:
                    m = measure(run, sync, args.min_time, args.min_samples)
                    if best is None or m[0] < best[0][0]:
                        best = (m, variant)
                (median, fastest, samples, iters), variant = best
                r.update(variant=variant, median=value(c.unit, c.work, median), best=value(c.unit, c.work, fastest),
                         median_s=median, best_s=fastest, samples=samples, iters=iters)
            except Exception as e:  # one broken case must not end the suite
                r.update(error="%s: %s" % (type(e).__name__, e), median=0, best=0, median_s=0, best_s=0,
                         samples=0, iters=0)
            if not r.get("variant"):
                r.pop("variant", None)
            out.append(r)
            print_row(r)
            if args.cuda:
                torch.cuda.empty_cache()
    return out


def print_row(r):
    if r.get("error"):
        line = "%-36s %-6s %-6s %3d %12s %12s  %-7s error: %s" % (
            r["case"], r["impl"], r["device"], r["threads"], "-", "-", r["unit"], r["error"])
    else:
        line = "%-36s %-6s %-6s %3d %12.4g %12.4g  %-7s %d×%d %s" % (
            r["case"], r["impl"], r["device"], r["threads"], r["median"], r["best"], r["unit"],
            r["samples"], r["iters"], r.get("variant", ""))
    print(line, file=sys.stderr, flush=True)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def blas_libraries():
    """The BLAS libraries loaded into this process after a GEMM from each
    peer: what actually ran, whatever the build says."""
    import numpy as np
    import torch
    a = np.ones((64, 64), np.float32)
    _ = a @ a
    t = torch.ones(64, 64)
    _ = t @ t
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                name = os.path.basename(path)
                if re.search(r"blas|mkl|blis", name, re.I):
                    libs.add(os.path.realpath(path))
    except OSError:
        pass
    return ", ".join(sorted(libs))


def machine(args):
    import numpy as np
    import torch
    m = {"cpu": cpu_model(), "cores": os.cpu_count(), "os": sys.platform, "arch": platform.machine(),
         "python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
         "blas": blas_libraries()}
    if args.cuda:
        m["cuda"] = torch.version.cuda or ""
        m["gpu"] = torch.cuda.get_device_name(0)
        m["devices"] = [{"name": "cuda", "adapter": m["gpu"], "backend": "cuda", "type": "discrete"}]
    else:
        m["devices"] = [{"name": "cpu", "adapter": m["cpu"], "backend": "cpu", "type": "cpu"}]
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", default="1,%d" % os.cpu_count() if os.cpu_count() > 1 else "1",
                   help="thread counts, comma-separated (CPU)")
    p.add_argument("--quick", action="store_true", help="tiny sizes and short timing")
    p.add_argument("--filter", default="", help="only cases whose name matches this regular expression")
    p.add_argument("--json", default="", help="write the results to this JSON file")
    p.add_argument("--min-time", type=float, default=None, help="seconds per case at the least")
    p.add_argument("--min-samples", type=int, default=5)
    p.add_argument("--cuda", action="store_true", help="PyTorch on the CUDA GPU instead of the CPU")
    p.add_argument("--list", action="store_true", help="print the CPU case names and exit")
    p.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.min_time is None:
        args.min_time = 0.05 if args.quick else 1.0

    if args.list:
        for c in cases(args.quick, args.cuda):
            if re.search(args.filter, c.name):
                print(c.name)
        return
    if args.worker:
        json.dump(run_cases(args, args.worker), sys.stdout)
        return

    started = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    results = []
    if args.cuda:
        results = run_cases(args, os.cpu_count())
    else:
        for t in [int(s) for s in args.threads.split(",")]:
            # A process per count: OpenBLAS sizes its pool once, at load.
            env = dict(os.environ, OPENBLAS_NUM_THREADS=str(t), OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t))
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(t), "--filter", args.filter,
                   "--min-time", str(args.min_time), "--min-samples", str(args.min_samples)]
            if args.quick:
                cmd.append("--quick")
            out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, check=True).stdout
            results += json.loads(out)
    doc = {"suite": SUITE, "schema": SCHEMA, "tool": "peers", "started": started, "args": sys.argv[1:],
           "machine": machine(args), "results": results}
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
