#!/usr/bin/env node
// ONNX Runtime (npm onnxruntime-node, CPU execution provider) peer of
// webtensor's ONNX cases (bench/cases_onnx.go): testdata/onnx's exported
// models, inference latency at batch 1 and 32, under the same case names,
// written as bench/schema JSON (impl "onnxruntime") for go run
// ./bench/report.
//
//	npm ci --ignore-scripts --prefix bench/peers/ort   # make bench does this
//	node bench/peers/ort/ort_peer.js [--threads 1,2] [--min-time 1] [--quick] [--json out.json]
//
// --ignore-scripts: the package ships its CPU binaries; its install
// script only fetches GPU providers (from NuGet), which the CPU peer does
// not use.
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const ort = require("onnxruntime-node");

const root = path.join(__dirname, "..", "..", "..");
const models = {
  mlp: { shape: [20], int: false },
  resnet18: { shape: [3, 40, 40], int: false },
  mobilenetv2: { shape: [3, 40, 40], int: false },
  transformer: { shape: [12], int: true },
};

function parseArgs(argv) {
  const a = { threads: os.cpus().length > 1 ? `1,${os.cpus().length}` : "1", minTime: 1, quick: false, json: "" };
  for (let i = 0; i < argv.length; i++) {
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case "--threads": a.threads = v(); break;
      case "--min-time": a.minTime = Number(v()); break;
      case "--json": a.json = v(); break;
      case "--quick": a.quick = true; a.minTime = 0.05; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  a.threads = a.threads.split(",").map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--threads: ${s} is not a count ≥ 1`);
    return n;
  });
  return a;
}

// A seeded generator (mulberry32) and Box-Muller normals: the inputs
// need only be fixed, not the same draws as the other implementations.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function input(spec, batch) {
  const shape = [batch, ...spec.shape];
  const n = shape.reduce((a, b) => a * b, 1);
  const r = rng(1);
  if (spec.int) {
    const v = new BigInt64Array(n);
    for (let k = 0; k < n; k++) v[k] = BigInt(Math.floor(r() * 50));
    return new ort.Tensor("int64", v, shape);
  }
  const v = new Float32Array(n);
  for (let k = 0; k < n; k++) v[k] = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  return new ort.Tensor("float32", v, shape);
}

// readNpy reads the little-endian float32, float64 and int64 .npy files
// that gen_onnx.py writes: {dtype, shape, data}.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf[6] === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = buf[6] === 1 ? 10 : 12;
  const header = buf.toString("latin1", start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  const body = buf.subarray(start + headerLen);
  const copy = (T) => new T(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  switch (descr) {
    case "<f4": return { dtype: "float32", shape, data: copy(Float32Array) };
    case "<f8": return { dtype: "float32", shape, data: Float32Array.from(copy(Float64Array)) };
    case "<i8": return { dtype: "int64", shape, data: copy(BigInt64Array) };
  }
  throw new Error(`${file}: dtype ${descr} is not supported`);
}

// check runs the stored input and compares with PyTorch's stored output
// within the importer's tolerance, 1e-4·max|ref| + 1e-5, so that the peer
// times the same model.
async function check(session, name) {
  const dir = path.join(root, "testdata", "onnx");
  const x = readNpy(path.join(dir, `${name}.input.npy`));
  const want = readNpy(path.join(dir, `${name}.output.npy`));
  const out = await session.run({ [session.inputNames[0]]: new ort.Tensor(x.dtype, x.data, x.shape) });
  const got = out[session.outputNames[0]].data;
  let maxRef = 0;
  for (const v of want.data) maxRef = Math.max(maxRef, Math.abs(v));
  const tol = 1e-4 * maxRef + 1e-5;
  for (let k = 0; k < want.data.length; k++) {
    if (!(Math.abs(got[k] - want.data[k]) <= tol)) {
      throw new Error(`${name}: output element ${k} is ${got[k]}, PyTorch's ${want.data[k]}`);
    }
  }
}

// measure runs once to warm up, then one run per sample until minTime
// has passed and at least 5 samples: median and best in seconds.
async function measure(run, minTime) {
  await run();
  const times = [];
  const start = process.hrtime.bigint();
  while (times.length < 5 || Number(process.hrtime.bigint() - start) / 1e9 < minTime) {
    const t = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  times.sort((a, b) => a - b);
  return { median: times[times.length >> 1], best: times[0], samples: times.length };
}

function cpuModel() {
  const c = os.cpus();
  return c.length ? c[0].model : os.arch();
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const names = a.quick ? ["mlp", "resnet18"] : Object.keys(models);
  const batches = a.quick ? [1] : [1, 32];
  const version = require("onnxruntime-node/package.json").version;
  const started = new Date().toISOString();
  const results = [];
  for (const threads of a.threads) {
    for (const name of names) {
      const file = path.join(root, "testdata", "onnx", `${name}.onnx`);
      const session = await ort.InferenceSession.create(file, {
        executionProviders: ["cpu"], intraOpNumThreads: threads, interOpNumThreads: 1,
        graphOptimizationLevel: "all",
      });
      let checked = "";
      try {
        await check(session, name);
      } catch (e) {
        checked = String(e.message || e);
      }
      for (const batch of batches) {
        const r = {
          case: `onnx/${name}-b${batch}`, group: `onnx-${name}`, size: batch, impl: "onnxruntime",
          device: "cpu", adapter: cpuModel(), backend: "cpu", adapter_type: "cpu", threads,
          variant: `onnxruntime-node ${version}`, unit: "ms",
        };
        try {
          if (checked) throw new Error(checked);
          const feeds = { [session.inputNames[0]]: input(models[name], batch) };
          const m = await measure(() => session.run(feeds), a.minTime);
          Object.assign(r, {
            median: m.median * 1e3, best: m.best * 1e3, median_s: m.median, best_s: m.best,
            samples: m.samples, iters: 1,
          });
          console.log(`${r.case.padEnd(28)} cpu  T=${threads}  median ${r.median.toFixed(3)} ms  best ${r.best.toFixed(3)} ms  (${m.samples} runs)`);
        } catch (e) {
          r.error = String(e);
          console.log(`${r.case} T=${threads}: ${r.error}`);
        }
        results.push(r);
      }
      await session.release();
    }
  }
  if (a.json) {
    const file = {
      suite: "webtensor-bench", schema: 1, tool: "onnxruntime", started, args: process.argv.slice(2),
      machine: {
        cpu: cpuModel(), cores: os.cpus().length, os: process.platform, arch: os.arch(),
        devices: [{ name: "cpu", adapter: cpuModel(), backend: "cpu", type: "cpu" }],
      },
      results,
    };
    fs.mkdirSync(path.dirname(a.json), { recursive: true });
    fs.writeFileSync(a.json, JSON.stringify(file, null, 1) + "\n");
  }
  if (results.some((r) => r.error)) process.exitCode = 1;
}

main().catch((e) => {
  console.error("ort_peer:", e.message || e);
  process.exit(2);
});
