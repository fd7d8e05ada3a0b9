#!/usr/bin/env python3
"""ONNX Runtime's outputs for the Resize modes PyTorch never exports (issue
18): every nearest and linear coordinate transformation opsets 13-17
define but tf_crop_and_resize (half_pixel, pytorch_half_pixel,
align_corners, asymmetric), the four nearest rounding modes, by scales and
by sizes (outputs of size 1 included), on 1-D, 2-D and 3-D spatial axes,
scales on the batch and channel axes, and cubic (A = -0.75) with
half_pixel and align_corners -- the cases of onnx's TestResizeSpecModes.

It builds one ONNX model (opset 17) with Debian's python3-onnx 1.12 helper
API -- inputs x1 [2, 3, 7], x2 [1, 2, 5, 4], x3 [1, 2, 3, 4, 5] and x0
[2, 3, 4], one Resize node and output per case -- runs it in ONNX Runtime
(npm onnxruntime-node, CPU, from bench/peers/ort: `make ort-peer`) through
resize_ort.js, and writes testdata/onnx/resize_ort.onnx and
testdata/onnx/resize_ort.json: the inputs, each case's attributes and
ORT's output. onnx's TestResizeMatchesONNXRuntime reads them.

    make golden-ort      # or: /usr/bin/python3 testdata/golden/gen_resize_ort.py
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(ROOT, "testdata", "onnx")

COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
ROUNDINGS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
SHAPES = {"x1": [2, 3, 7], "x2": [1, 2, 5, 4], "x3": [1, 2, 3, 4, 5]}


def cases():
    """The cases of TestResizeSpecModes, in its order."""
    out = []
    for si, (inp, shape) in enumerate(SHAPES.items()):
        for ci, coord in enumerate(COORDS):
            for mode in ("nearest", "linear"):
                rounding = ROUNDINGS[(si + ci) % 4]
                scales = [1.0, 1.0] + [[2, 1.5, 0.5][(k + ci) % 3] for k in range(2, len(shape))]
                out.append(dict(input=inp, mode=mode, coord=coord, rounding=rounding,
                                scales=[float(s) for s in scales], sizes=None))
                sizes = shape[:2] + [[11, 1, 3][(k + si) % 3] for k in range(2, len(shape))]
                out.append(dict(input=inp, mode=mode, coord=coord, rounding=ROUNDINGS[(si + ci + 1) % 4],
                                scales=None, sizes=sizes))
    out.append(dict(input="x0", mode="nearest", coord="asymmetric", rounding="round_prefer_ceil",
                    scales=[2.0, 0.5, 1.5], sizes=None))
    out.append(dict(input="x0", mode="linear", coord="half_pixel", rounding=None,
                    scales=[1.5, 2.0, 1.0], sizes=None))
    # Cubic as the importer runs it (PyTorch's A = -0.75), by scales and
    # by sizes.
    for coord in ("half_pixel", "align_corners"):
        out.append(dict(input="x2", mode="cubic", coord=coord, rounding=None, scales=[1.0, 1.0, 1.5, 2.0],
                        sizes=None, cubic_coeff_a=-0.75))
        out.append(dict(input="x2", mode="cubic", coord=coord, rounding=None, scales=None, sizes=[1, 2, 3, 7],
                        cubic_coeff_a=-0.75))
    return out


def main():
    shapes = dict(SHAPES, x0=[2, 3, 4])
    rng = np.random.default_rng(18)
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    nodes, inits, outputs = [], [], []
    cs = cases()
    shapes = dict(SHAPES, x0=[2, 3, 4])
    for i, c in enumerate(cs):
        attrs = dict(mode=c["mode"], coordinate_transformation_mode=c["coord"])
        if c["rounding"]:
            attrs["nearest_mode"] = c["rounding"]
        if "cubic_coeff_a" in c:
            attrs["cubic_coeff_a"] = c["cubic_coeff_a"]
        if c["scales"] is not None:
            inits.append(helper.make_tensor(f"scales{i}", TensorProto.FLOAT, [len(c["scales"])], c["scales"]))
            ins = [c["input"], "", f"scales{i}"]
        else:
            inits.append(helper.make_tensor(f"sizes{i}", TensorProto.INT64, [len(c["sizes"])], c["sizes"]))
            ins = [c["input"], "", "", f"sizes{i}"]
        c["output"] = f"y{i}"
        nodes.append(helper.make_node("Resize", ins, [c["output"]], name=f"resize{i}", **attrs))
        outputs.append(helper.make_tensor_value_info(c["output"], TensorProto.FLOAT, [None] * len(shapes[c["input"]])))
    graph = helper.make_graph(
        nodes, "resize_ort",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()],
        outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="gen_resize_ort.py")
    onnx.checker.check_model(model)
    path = os.path.join(OUT, "resize_ort.onnx")
    onnx.save(model, path)

    with tempfile.TemporaryDirectory() as tmp:
        fin, fout = os.path.join(tmp, "in.json"), os.path.join(tmp, "out.json")
        with open(fin, "w") as f:
            json.dump({n: {"shape": list(v.shape), "data": v.ravel().tolist()} for n, v in inputs.items()}, f)
        subprocess.run(["node", os.path.join(HERE, "resize_ort.js"), path, fin, fout], check=True)
        with open(fout) as f:
            got = json.load(f)
    for c in cs:
        y = got[c["output"]]
        c["shape"], c["data"] = y["shape"], y["data"]
    golden = {
        "ort": got["__version__"],
        "inputs": {n: {"shape": list(v.shape), "data": v.ravel().tolist()} for n, v in inputs.items()},
        "cases": cs,
    }
    with open(os.path.join(OUT, "resize_ort.json"), "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(cs)} Resize cases, ONNX Runtime {got['__version__']}")


if __name__ == "__main__":
    sys.exit(main())
