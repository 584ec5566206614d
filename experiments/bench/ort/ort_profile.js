#!/usr/bin/env node
// ONNX Runtime's per-op profile of a model exported by ../shared/bench/ort/export_onnx.py: the peer's side of
// experiments/bench/serving/PROFILE.md, beside ours (go run ./experiments/bench/opprof).
//
//   NODE_PATH=.../node_modules node ort_profile.js MODEL.onnx [--batch 1] [--iters 30] [--threads 2] [--img 224]
//
// The session is ort_bench.js's (graph optimizations 'all', intra-op threads = --threads, sequential execution),
// with enableProfiling on: after 3 warm-up runs and --iters timed ones it ends the profile (ONNX Runtime writes its
// JSON trace, one event per node per run) and prints a markdown table: per op kind and shapes, the count of nodes,
// the median over runs of the summed kernel times in ms, and their share of the median run (model_run event);
// then the run and the sum of the kernels. The trace file is removed unless --keep is given.
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

function arg(name, def) {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : def;
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
}

function shapes(a) {
  return (a || []).map((t) => Object.values(t)[0].join('×')).join(', ');
}

async function main(model) {
  const batch = +arg('batch', 1), iters = +arg('iters', 30), threads = +arg('threads', 2), img = +arg('img', 224);
  const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ortprof-')), 'ort');
  const s = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential',
    enableProfiling: true, profileFilePrefix: prefix,
  });
  const data = new Float32Array(batch * 3 * img * img);
  for (let i = 0; i < data.length; i++) data[i] = ((i * 7) % 255) / 127 - 1;
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', data, [batch, 3, img, img]) };
  const wall = [];
  for (let i = 0; i < 3 + iters; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    if (i >= 3) wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  s.endProfiling();
  const dir = path.dirname(prefix);
  const file = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.json')));
  const ev = JSON.parse(fs.readFileSync(file));
  const runs = ev.filter((e) => e.name === 'model_run').sort((a, b) => a.ts - b.ts).slice(3);
  const kinds = new Map(); // kind → {nodes: Set, per: number[] per run}
  runs.forEach((r, ri) => {
    for (const e of ev) {
      if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < r.ts || e.ts > r.ts + r.dur) continue;
      const k = `${e.args.op_name} ${shapes(e.args.input_type_shape)} → ${shapes(e.args.output_type_shape)}`;
      if (!kinds.has(k)) kinds.set(k, { nodes: new Set(), per: new Array(runs.length).fill(0) });
      const o = kinds.get(k);
      o.nodes.add(e.name);
      o.per[ri] += e.dur / 1000;
    }
  });
  const run = median(runs.map((r) => r.dur / 1000));
  const rows = [...kinds.entries()].map(([k, o]) => [k, o.nodes.size, median(o.per)]).sort((a, b) => b[2] - a[2]);
  console.log(`${path.basename(model)} onnxruntime ${ort.env.versions.common}, batch ${batch}, ${threads} intra-op threads, ${iters} runs, medians`);
  console.log(`wall-clock run() median ${median(wall).toFixed(3)} ms\n`);
  console.log('| op kind: inputs → outputs | nodes | ms | share |\n|---|---:|---:|---:|');
  let sum = 0;
  for (const [k, n, t] of rows) {
    sum += t;
    console.log(`| ${k} | ${n} | ${t.toFixed(3)} | ${(100 * t / run).toFixed(1)} % |`);
  }
  console.log(`| **sum of kernels** | | ${sum.toFixed(3)} | ${(100 * sum / run).toFixed(1)} % |`);
  console.log(`| **model_run** | | ${run.toFixed(3)} | 100 % |`);
  if (process.argv.includes('--keep')) console.log(`trace: ${file}`);
  else fs.rmSync(dir, { recursive: true });
}

const model = process.argv.find((a) => a.endsWith('.onnx'));
if (!model) { console.error('usage: node ort_profile.js MODEL.onnx [--batch N] [--iters N] [--threads N] [--keep]'); process.exit(2); }
main(model).catch((e) => { console.error(e); process.exit(1); });
