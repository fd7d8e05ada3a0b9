#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (npm onnxruntime-node, CPU execution
// provider, installed in bench/peers/ort by `make ort-peer`) for
// gen_resize_ort.py:
//
//	node resize_ort.js model.onnx inputs.json outputs.json
//
// inputs.json maps each float32 input's name to {shape, data}; outputs.json
// gets every output the same way, and __version__, ORT's version.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const ort = require(path.join(__dirname, "..", "..", "bench", "peers", "ort", "node_modules", "onnxruntime-node"));

async function main() {
  const [model, inFile, outFile] = process.argv.slice(2);
  if (!outFile) throw new Error("usage: resize_ort.js model.onnx inputs.json outputs.json");
  const session = await ort.InferenceSession.create(model, { executionProviders: ["cpu"], graphOptimizationLevel: "disabled" });
  const feeds = {};
  for (const [name, v] of Object.entries(JSON.parse(fs.readFileSync(inFile, "utf8")))) {
    feeds[name] = new ort.Tensor("float32", Float32Array.from(v.data), v.shape);
  }
  const results = await session.run(feeds);
  const out = { __version__: ort.env.versions.common };
  for (const [name, t] of Object.entries(results)) {
    out[name] = { shape: t.dims.map(Number), data: Array.from(t.data) };
  }
  fs.writeFileSync(outFile, JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
