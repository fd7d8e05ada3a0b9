// The TensorFlow.js cases of webtensor's benchmark (bench/cases.go's, for
// the ops tfjs has) and their timing, shared by the node peer
// (tfjs_peer.mjs, on dawn.node) and the browser page of bench/browser (on
// the page's navigator.gpu): plain ES module code that takes tfjs as an
// argument and imports nothing, so it runs in both.
// A seeded generator (mulberry32) and Box-Muller normals: the inputs need
// only be fixed, not the same draws as webtensor's.
export function randn(n, seed) {
  let s = seed | 0;
  const u = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const v = new Float32Array(n);
  for (let k = 0; k < n; k++) v[k] = Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
  return v;
}

// count names an element count as bench/cases.go's count does.
export function count(n) {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)}M`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)}K`;
  return String(n);
}

// close throws unless every got[k] is within tol·max(1, max|want|) of
// want[k] (bench/main.go's checkResult rule).
export function close(name, got, want, tol, at = (k) => k) {
  let scale = 1;
  for (const w of want) scale = Math.max(scale, Math.abs(w));
  for (let k = 0; k < want.length; k++) {
    const g = got[at(k)];
    if (!(Math.abs(g - want[k]) <= tol * scale)) {
      throw new Error(`${name}: element ${at(k)} is ${g}, the float64 reference ${want[k]} (tolerance ${tol}·${scale})`);
    }
  }
}

// samples picks up to m indices below n, spread and fixed.
export function samples(n, m) {
  const out = [];
  for (let k = 0; k < Math.min(n, m); k++) out.push(Math.floor(((k * 2654435761) % 4294967296) / 4294967296 * n));
  return out;
}

// cases mirrors bench/cases.go's list (same names, sizes, units and work)
// for the ops tfjs has; quick swaps every size for cases(true)'s tiny one.
// Each case has setup(tf) → { run: () => result tensor (or null), check:
// async (first result) → throws on a wrong value, free }.
export function cases(quick) {
  const cs = [];
  const matmuls = quick ? [64, 128] : [256, 512, 1024, 2048, 4096];
  for (const n of matmuls) cs.push(matmulCase(n));
  cs.push(quick ? bmmCase(4, 32) : bmmCase(64, 256));
  const convs = quick ? [[2, 8, 8, 8, 3], [2, 16, 8, 8, 1]]
    : [[8, 64, 64, 56, 3], [8, 128, 128, 28, 3], [8, 256, 256, 14, 3], [8, 256, 64, 56, 1]];
  for (const s of convs) cs.push(convCase(...s));
  const elems = quick ? [1 << 12, 1 << 16] : [1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24];
  for (const n of elems) cs.push(addCase(n));
  for (const n of elems) cs.push(reluCase(n));
  for (const n of elems) cs.push(copyCase(n));
  const [rows, cols, sumN, sumSmall] = quick ? [64, 128, 1 << 16, 1 << 12] : [4096, 1024, 1 << 24, 1 << 20];
  cs.push(softmaxCase(rows, cols), sumCase(sumSmall), sumCase(sumN));
  cs.push(quick ? mlpCase([64, 32, 32, 10], 16) : mlpCase([784, 512, 512, 10], 128));
  cs.push(smallAddCase(quick ? 100 : 1000, 256));
  return cs;
}

function matmulCase(n) {
  return {
    name: `matmul/${n}`, group: "matmul", size: n, unit: "GFLOPS", work: 2 * n * n * n, heavy: n >= 4096,
    setup(tf) {
      const av = randn(n * n, 1), bv = randn(n * n, 2);
      const a = tf.tensor2d(av, [n, n]), b = tf.tensor2d(bv, [n, n]);
      return {
        run: () => tf.matMul(a, b),
        check: async (c) => {
          const got = await c.data();
          const idx = samples(n * n, 256);
          close(this.name, got, idx.map((k) => dot(av, bv, Math.floor(k / n) * n, 1, k % n, n, n)), 1e-4, (k) => idx[k]);
        },
        free: () => tf.dispose([a, b]),
      };
    },
  };
}

// dot is Σ_k a[ai+k·as]·b[bi+k·bs] over n terms, in float64.
function dot(a, b, ai, as, bi, bs, n) {
  let s = 0;
  for (let k = 0; k < n; k++) s += a[ai + k * as] * b[bi + k * bs];
  return s;
}

function bmmCase(batch, n) {
  return {
    name: `bmm/${batch}x${n}`, group: "bmm", size: n, unit: "GFLOPS", work: 2 * batch * n * n * n,
    setup(tf) {
      const av = randn(batch * n * n, 1), bv = randn(batch * n * n, 2);
      const a = tf.tensor3d(av, [batch, n, n]), b = tf.tensor3d(bv, [batch, n, n]);
      return {
        run: () => tf.matMul(a, b),
        check: async (c) => {
          const got = await c.data();
          const idx = samples(batch * n * n, 256);
          const want = idx.map((k) => {
            const m = Math.floor(k / (n * n)), i = Math.floor(k / n) % n, j = k % n;
            return dot(av, bv, m * n * n + i * n, 1, m * n * n + j, n, n);
          });
          close(this.name, got, want, 1e-4, (k) => idx[k]);
        },
        free: () => tf.dispose([a, b]),
      };
    },
  };
}

// convCase is bench/cases.go's convCase: batch n, cin→cout channels on h×h
// inputs, a k×k kernel with "same" padding, stride 1. tfjs computes
// convolutions channels-last (NHWC, HWIO weights), its native layout, so
// the variant says so; the work is the same.
function convCase(n, cin, cout, h, k) {
  const flops = 2 * n * cout * h * h * cin * k * k;
  return {
    name: `conv2d/n${n}-${cin}to${cout}-${h}x${h}-k${k}`, group: "conv2d", size: flops, unit: "GFLOPS",
    work: flops, heavy: flops > 10e9, variant: "NHWC",
    setup(tf) {
      const xv = randn(n * h * h * cin, 1), wv = randn(k * k * cin * cout, 2);
      const x = tf.tensor4d(xv, [n, h, h, cin]), w = tf.tensor4d(wv, [k, k, cin, cout]);
      const p = k >> 1;
      return {
        run: () => tf.conv2d(x, w, 1, p === 0 ? "valid" : [[0, 0], [p, p], [p, p], [0, 0]], "NHWC"),
        check: async (y) => {
          const got = await y.data();
          const idx = samples(n * h * h * cout, 64);
          const want = idx.map((o) => {
            const co = o % cout, xw = Math.floor(o / cout) % h, yh = Math.floor(o / (cout * h)) % h;
            const b = Math.floor(o / (cout * h * h));
            let s = 0;
            for (let dy = 0; dy < k; dy++) {
              for (let dx = 0; dx < k; dx++) {
                const iy = yh + dy - p, ix = xw + dx - p;
                if (iy < 0 || iy >= h || ix < 0 || ix >= h) continue;
                s += dot(xv, wv, ((b * h + iy) * h + ix) * cin, 1, (dy * k + dx) * cin * cout + co, cout, cin);
              }
            }
            return s;
          });
          close(this.name, got, want, 1e-4, (q) => idx[q]);
        },
        free: () => tf.dispose([x, w]),
      };
    },
  };
}

// elementwise is an elementwise case over n values of `inputs` operands,
// counting bytes as bench/cases.go does (each input read once, the output
// written once).
function elementwise(name, group, n, inputs, op, ref) {
  return {
    name: `${group}/${count(n)}`, group, size: n, unit: "GB/s", work: (inputs + 1) * 4 * n,
    setup(tf) {
      const vs = Array.from({ length: inputs }, (_, i) => randn(n, i + 1));
      const ts = vs.map((v) => tf.tensor1d(v));
      return {
        run: () => op(tf, ...ts),
        check: async (y) => close(name, await y.data(), Float64Array.from({ length: n }, (_, k) => ref(...vs.map((v) => v[k]))), 1e-5),
        free: () => tf.dispose(ts),
      };
    },
  };
}

const addCase = (n) => elementwise(`add/${count(n)}`, "add", n, 2, (tf, a, b) => tf.add(a, b), (a, b) => a + b);
const reluCase = (n) => elementwise(`relu/${count(n)}`, "relu", n, 1, (tf, a) => tf.relu(a), (a) => Math.max(a, 0));
// copyCase copies as webtensor's does, by a reflect pad without padding:
// tfjs's clone and identity share the input's buffer and would move
// nothing, while its MirrorPad runs a kernel that writes a new buffer.
const copyCase = (n) => elementwise(`copy/${count(n)}`, "copy", n, 1, (tf, a) => tf.mirrorPad(a, [[0, 0]], "reflect"), (a) => a);

function softmaxCase(rows, cols) {
  return {
    name: `softmax/${rows}x${cols}`, group: "softmax", size: rows * cols, unit: "GB/s", work: 2 * 4 * rows * cols,
    setup(tf) {
      const v = randn(rows * cols, 1);
      const a = tf.tensor2d(v, [rows, cols]);
      return {
        run: () => tf.softmax(a),
        check: async (y) => {
          const got = await y.data();
          const want = new Float64Array(rows * cols);
          for (let r = 0; r < rows; r++) {
            let m = -Infinity, s = 0;
            for (let c = 0; c < cols; c++) m = Math.max(m, v[r * cols + c]);
            for (let c = 0; c < cols; c++) s += Math.exp(v[r * cols + c] - m);
            for (let c = 0; c < cols; c++) want[r * cols + c] = Math.exp(v[r * cols + c] - m) / s;
          }
          close(this.name, got, want, 1e-4);
        },
        free: () => a.dispose(),
      };
    },
  };
}

function sumCase(n) {
  return {
    name: `sum/${count(n)}`, group: "sum", size: n, unit: "GB/s", work: 4 * n,
    setup(tf) {
      const v = randn(n, 1);
      const a = tf.tensor1d(v);
      return {
        run: () => tf.sum(a),
        check: async (y) => {
          let s = 0;
          for (const x of v) s += x;
          close(this.name, await y.data(), [s], 1e-4);
        },
        free: () => a.dispose(),
      };
    },
  };
}

// mlpCase is bench/cases_train.go's mlpCase: an MLP with ReLU between its
// layers, softmax cross-entropy on fixed labels, trained by SGD with
// momentum 0.9 (lr 0.01), one step per iteration: forward, backward and
// update (tf.train.momentum's minimize). Its weights start as PyTorch's
// Linear does (uniform ±1/√fan_in). The check compares the first step's
// loss with a float64 forward pass.
function mlpCase(widths, batch) {
  return {
    name: `mlp-step/${widths.join("-")}-b${batch}`, group: "train", size: batch, unit: "ms", work: 0,
    setup(tf) {
      let seed = 10;
      const layers = [];
      for (let i = 0; i + 1 < widths.length; i++) {
        const [fin, fout] = [widths[i], widths[i + 1]];
        const bound = 1 / Math.sqrt(fin);
        const uniform = (n) => Float32Array.from(randn(n, seed++), (z) => bound * Math.tanh(z));
        const wv = uniform(fin * fout), bv = uniform(fout);
        layers.push({ wv, bv, w: tf.variable(tf.tensor2d(wv, [fin, fout])), b: tf.variable(tf.tensor1d(bv)) });
      }
      const classes = widths[widths.length - 1];
      const xv = randn(batch * widths[0], 1);
      const labels = Array.from({ length: batch }, (_, i) => (i * 7) % classes);
      const x = tf.tensor2d(xv, [batch, widths[0]]);
      const y = tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(labels, "int32"), classes), "float32"));
      const opt = tf.train.momentum(0.01, 0.9);
      const vars = layers.flatMap((l) => [l.w, l.b]);
      const forward = () => {
        let h = x;
        layers.forEach((l, i) => {
          if (i > 0) h = tf.relu(h);
          h = tf.add(tf.matMul(h, l.w), l.b);
        });
        return tf.losses.softmaxCrossEntropy(y, h);
      };
      return {
        // The loss comes back only for the check; the timed steps keep
        // none (minimize's cost is disposed), as webtensor's step does.
        run: () => opt.minimize(forward, true, vars),
        check: async (loss) => {
          let h = Array.from({ length: batch }, (_, r) => Float64Array.from(xv.subarray(r * widths[0], (r + 1) * widths[0])));
          layers.forEach((l, i) => {
            const [fin, fout] = [widths[i], widths[i + 1]];
            h = h.map((row) => {
              const out = new Float64Array(fout);
              for (let j = 0; j < fout; j++) {
                let s = l.bv[j];
                for (let k = 0; k < fin; k++) s += (i > 0 ? Math.max(row[k], 0) : row[k]) * l.wv[k * fout + j];
                out[j] = s;
              }
              return out;
            });
          });
          let total = 0;
          h.forEach((row, r) => {
            const m = Math.max(...row);
            let s = 0;
            for (const v of row) s += Math.exp(v - m);
            total += Math.log(s) + m - row[labels[r]];
          });
          close(this.name, await loss.data(), [total / batch], 1e-4);
        },
        free: () => tf.dispose([x, y, ...vars]) || opt.dispose(),
      };
    },
  };
}

// smallAddCase is bench/cases.go's smallops-add: a chain of ops adds on a
// 256-value tensor (x = x + w, each reading the last result), µs per op.
function smallAddCase(ops, n) {
  return {
    name: `smallops-add/${ops}x${n}`, group: "smallops", size: n, unit: "µs/op", work: ops,
    setup(tf) {
      const xv = randn(n, 1), wv = randn(n, 2);
      const x0 = tf.tensor1d(xv), w = tf.tensor1d(wv);
      return {
        run: () => {
          let x = tf.add(x0, w);
          for (let k = 1; k < ops; k++) {
            const next = tf.add(x, w);
            x.dispose();
            x = next;
          }
          return x;
        },
        check: async (y) => close(this.name, await y.data(), Float64Array.from(xv, (v, k) => v + ops * wv[k]), 1e-4),
        free: () => tf.dispose([x0, w]),
      };
    },
  };
}

// measure is bench/measure.go's measure: a warm-up, a calibration that
// doubles a batch until it lasts a quarter of a sample, then samples of
// iters back-to-back iterations each ended by one sync; median and best
// seconds per iteration.
export async function measure(run, sync, minTime, minSamples) {
  run();
  await sync();
  const perSample = minTime / minSamples;
  let iters = 1;
  for (let n = 1; ; n *= 2) {
    const t = performance.now();
    for (let k = 0; k < n; k++) run();
    await sync();
    const took = (performance.now() - t) / 1e3;
    if (took >= perSample / 4 || n >= 1 << 20) {
      iters = Math.max(1, Math.min(Math.floor((n * perSample) / Math.max(took, 1e-9)), 1 << 20));
      break;
    }
  }
  const times = [];
  const began = performance.now();
  while (times.length < minSamples || ((performance.now() - began) / 1e3 < minTime && times.length < 1000)) {
    const t = performance.now();
    for (let k = 0; k < iters; k++) run();
    await sync();
    times.push((performance.now() - t) / 1e3 / iters);
  }
  times.sort((a, b) => a - b);
  const m = times.length;
  const median = m % 2 ? times[m >> 1] : (times[m / 2 - 1] + times[m / 2]) / 2;
  return { median, best: times[0], samples: m, iters };
}

// value converts seconds per iteration to unit (schema.Value).
export function value(unit, work, seconds) {
  if (seconds <= 0) return 0;
  switch (unit) {
    case "GFLOPS": case "GB/s": return work / seconds / 1e9;
    case "µs/op": return (seconds * 1e6) / work;
  }
  return seconds * 1e3;
}
