#!/usr/bin/env node
// TensorFlow.js's WebGPU backend (npm @tensorflow/tfjs-backend-webgpu on
// dawn.node, npm webgpu) as a same-device peer of webtensor's WebGPU rows:
// the cases of go run ./bench that tfjs has, under the same names, sizes,
// units and timing, written as bench/schema JSON (impl "tfjs-webgpu") for
// go run ./bench/report, which sets them beside webtensor's rows on the
// same software adapter with a "÷ tfjs" ratio.
//
//	npm ci --ignore-scripts --prefix bench/peers/tfjs   # make bench does this
//	node bench/peers/tfjs/tfjs_peer.mjs [--backends opengles,vulkan] [--min-time 1]
//	     [--quick] [--full] [--filter REGEXP] [--list] [--json out.json]
//
// The npm webgpu package bundles its own Dawn, so each adapter is chosen
// the way webtensor's tests find it, one child process per backend (the
// environment must be set before Dawn starts):
//
//   - opengles: Mesa's llvmpipe through Dawn's OpenGL ES backend, headless
//     (EGL_PLATFORM=surfaceless), at the compatibility feature level —
//     webtensor's webgpu:1 on a machine without a GPU;
//   - vulkan: the Mesa 25 lavapipe that make deps installs
//     ($XDG_CACHE_HOME/webtensor/lavapipe/lvp_icd.json), alone
//     (VK_DRIVER_FILES) — webtensor's webgpu:0 there. Skipped, with a
//     message, where it is not installed.
//
// Each case is timed as bench/measure.go times it: one warm-up iteration,
// a calibration that doubles a batch until it fills a quarter of a sample,
// then samples of back-to-back iterations that each end with a real sync
// (the backend's pending commands submitted, then
// queue.onSubmittedWorkDone). tfjs is eager: every iteration's result is
// disposed, so the buffer pool recycles it as webtensor's Release does.
// The first result of every case is checked against a float64
// computation in JavaScript before it is timed.
//
// --ignore-scripts: webgpu's install script only clears a macOS
// quarantine attribute; the Linux dawn.node ships in the tarball.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire, register } from "node:module";
import { fileURLToPath } from "node:url";
import { cases, measure, value } from "./cases.mjs";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

// Backends: how each child process picks its adapter.
const backends = {
  opengles: {
    toggles: ["backend=opengles"], featureLevel: "compatibility",
    env: () => ({ EGL_PLATFORM: "surfaceless" }),
  },
  vulkan: {
    toggles: ["backend=vulkan"], featureLevel: "core",
    env: () => {
      const icd = lavapipeICD();
      return fs.existsSync(icd) ? { VK_DRIVER_FILES: icd } : null;
    },
    missing: () => `no lavapipe at ${lavapipeICD()} (make lavapipe installs it)`,
  },
};

// lavapipeICD is where make deps unpacks lavapipe, as
// backend/wgpu/internal/gpu.LavapipeICD finds it.
function lavapipeICD() {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(cache, "webtensor", "lavapipe", "lvp_icd.json");
}

// softwareRenderers are the adapter names of GPU APIs emulated on the CPU
// (as backend/wgpu/internal/gpu lists them): dawn.node reports no adapter
// type, so the name tells a software adapter apart.
const softwareRenderers = ["llvmpipe", "lavapipe", "softpipe", "swiftshader"];

function parseArgs(argv) {
  const a = { backends: "opengles,vulkan", minTime: 1, quick: false, full: false, filter: null, list: false,
    json: "", child: "", minSamples: 5 };
  for (let i = 0; i < argv.length; i++) {
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case "--backends": a.backends = v(); break;
      case "--min-time": a.minTime = Number(v()); a.minTimeSet = true; break;
      case "--min-samples": a.minSamples = Math.max(1, Number(v())); break;
      case "--filter": a.filter = new RegExp(v()); break;
      case "--json": a.json = v(); break;
      case "--quick": a.quick = true; break;
      case "--full": a.full = true; break;
      case "--list": a.list = true; break;
      case "--child": a.child = v(); break; // internal: run one backend, JSON results to stdout's last line
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (a.quick && !a.minTimeSet) a.minTime = 0.05;
  if (!(a.minTime >= 0)) throw new Error("--min-time: want seconds ≥ 0");
  a.backends = a.backends.split(",").filter(Boolean);
  for (const b of a.backends) if (!backends[b]) throw new Error(`--backends: ${b} is not one of ${Object.keys(backends)}`);
  return a;
}


function selected(a) {
  return cases(a.quick).filter((c) => !a.filter || a.filter.test(c.name));
}

// child runs the cases on one backend and prints {device, results} as
// JSON on its last line of output.
async function child(a) {
  const be = backends[a.child];
  const { create, globals } = await import("webgpu");
  Object.assign(globalThis, globals);
  const gpu = create(be.toggles);
  // tfjs asks navigator.gpu for a plain adapter; the OpenGL ES backend
  // offers only the compatibility feature level, so ask for it here.
  const requestAdapter = gpu.requestAdapter.bind(gpu);
  let adapter = null;
  const shim = { requestAdapter: async (opts) => (adapter = await requestAdapter({ ...opts, featureLevel: be.featureLevel })) };
  Object.defineProperty(globalThis, "navigator", { value: { gpu: shim }, configurable: true, writable: true });
  const tf = require("@tensorflow/tfjs-core");
  require("@tensorflow/tfjs-backend-webgpu");
  // The gradients (for mlp-step) are only in tfjs-core's ES module build;
  // their registry is global, so the CommonJS tf above sees them.
  register("./esm_resolve.mjs", import.meta.url);
  await import("@tensorflow/tfjs-core/dist/register_all_gradients.js");
  if (!(await tf.setBackend("webgpu")) || !adapter) throw new Error(`${a.child}: no WebGPU adapter`);
  await tf.ready();
  const backend = tf.backend();
  const info = adapter.info;
  const name = `${info.device || info.vendor || "adapter"}${info.description ? ` (${info.description})` : ""}`;
  const soft = softwareRenderers.some((s) => `${info.device} ${info.description}`.toLowerCase().includes(s));
  const device = { name: `webgpu/${a.child}`, adapter: name, backend: a.child, type: soft ? "cpu" : "gpu" };
  // sync submits what tfjs has recorded and waits for the queue: every
  // iteration before it has run on the device.
  const sync = async () => {
    if (backend.commandEncoder) {
      backend.endComputePassEncoder();
      backend.submitQueue();
    }
    await backend.device.queue.onSubmittedWorkDone();
  };
  const versions = `tfjs-backend-webgpu ${require("@tensorflow/tfjs-backend-webgpu/package.json").version}, ` +
    `webgpu (dawn.node) ${require("webgpu/package.json").version}`;
  const results = [];
  for (const c of selected(a)) {
    const r = {
      case: c.name, group: c.group, size: c.size, impl: "tfjs-webgpu", device: device.name, adapter: device.adapter,
      backend: device.backend, adapter_type: device.type, threads: 1,
      variant: [versions, c.variant, be.featureLevel === "compatibility" ? "compatibility mode" : ""].filter(Boolean).join(", "),
      unit: c.unit,
    };
    if (c.heavy && soft && !a.full) continue; // as go run ./bench skips them on software adapters
    let state;
    try {
      state = c.setup(tf);
      const first = state.run();
      await state.check(first);
      tf.dispose(first);
      const m = await measure(() => tf.dispose(state.run()), sync, a.minTime, a.minSamples);
      Object.assign(r, {
        median: value(c.unit, c.work, m.median), best: value(c.unit, c.work, m.best),
        median_s: m.median, best_s: m.best, samples: m.samples, iters: m.iters,
      });
      console.error(`${c.name.padEnd(36)} ${device.name.padEnd(15)} median ${r.median.toPrecision(4).padStart(10)}  best ${r.best.toPrecision(4).padStart(10)}  ${c.unit}  ${m.samples}×${m.iters}`);
    } catch (e) {
      r.error = String(e.message || e);
      console.error(`${c.name} ${device.name}: ${r.error}`);
    } finally {
      if (state) state.free();
    }
    results.push(r);
  }
  console.log(JSON.stringify({ device, results }));
  // dawn.node keeps the process alive otherwise.
  process.exit(0);
}

function cpuModel() {
  const c = os.cpus();
  return c.length ? c[0].model : os.arch();
}

// goArch names the architecture as Go's GOARCH does, as the other runs
// of a report name it.
function goArch() {
  return { x64: "amd64", ia32: "386" }[os.arch()] || os.arch();
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  if (a.child) return child(a);
  if (a.list) {
    for (const c of selected(a)) console.log(c.name);
    return;
  }
  const started = new Date().toISOString();
  const devices = [], results = [];
  for (const b of a.backends) {
    const env = backends[b].env();
    if (!env) {
      console.error(`tfjs_peer: skipping ${b}: ${backends[b].missing()}`);
      continue;
    }
    const args = [fileURLToPath(import.meta.url), "--child", b, "--min-time", String(a.minTime),
      "--min-samples", String(a.minSamples)];
    if (a.quick) args.push("--quick");
    if (a.full) args.push("--full");
    if (a.filter) args.push("--filter", a.filter.source);
    const p = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, cwd: here,
      stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 26 });
    const last = (p.stdout || "").trim().split("\n").pop();
    let out;
    try {
      out = JSON.parse(last);
    } catch {
      results.push({ case: "tfjs-webgpu", impl: "tfjs-webgpu", device: `webgpu/${b}`, backend: b, threads: 1, unit: "ms",
        median: 0, best: 0, median_s: 0, best_s: 0, samples: 0, iters: 0,
        error: `the ${b} run failed (exit ${p.status}${p.signal ? `, ${p.signal}` : ""})` });
      console.error(`tfjs_peer: the ${b} run failed (exit ${p.status})`);
      continue;
    }
    devices.push(out.device);
    results.push(...out.results);
  }
  if (a.json) {
    const file = {
      suite: "webtensor-bench", schema: 1, tool: "tfjs-webgpu", started, args: process.argv.slice(2),
      machine: { cpu: cpuModel(), cores: os.cpus().length, os: process.platform, arch: goArch(), devices },
      results: results.map((r) => ({ median: 0, best: 0, median_s: 0, best_s: 0, samples: 0, iters: 0, ...r })),
    };
    fs.mkdirSync(path.dirname(path.resolve(a.json)), { recursive: true });
    fs.writeFileSync(a.json, JSON.stringify(file, null, 1) + "\n");
  }
  if (results.some((r) => r.error)) process.exitCode = 1;
}

main().catch((e) => {
  console.error("tfjs_peer:", e.message || e);
  process.exit(2);
});
