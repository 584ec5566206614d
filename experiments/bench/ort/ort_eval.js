#!/usr/bin/env node
// ONNX Runtime's logits, float32 and int8, on the same images as ours (the int8 peer's checks).
//
//   node ort_eval.js --check MODEL.onnx REF.onnx
//       MODEL's logits on REF's check inputs (REF.check.f32, written by export_onnx.py or export_checkpoint.py)
//       against timm's float32 logits stored there: cosine similarity per image, largest |difference|.
//   node ort_eval.js --inputs X.f32 --shape N,C,H,W --out DIR [--batch 100] MODEL.onnx ...
//       each model's logits on the inputs X.f32 (float32, little-endian, already normalised: the images our
//       evaluation reads, written by experiments/int8) into DIR/NAME.logits.f32 (N × classes float32); one
//       JSON line per model. experiments/int8 computes top-1, agreement and cosines from them.
//
// Needs onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0) on NODE_PATH. Graph
// optimizations 'all' (as ort_bench.js), 2 intra-op threads unless --threads. One JSON line per model.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function arg(name, def) {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : def;
}

function session(model) {
  return ort.InferenceSession.create(model, {
    intraOpNumThreads: +arg('threads', 2), interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
}

async function logits(s, data, shape) {
  const out = await s.run({ [s.inputNames[0]]: new ort.Tensor('float32', data, shape) });
  return out[s.outputNames[0]].data;
}

function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
}

async function check(model, ref) {
  const base = ref.replace(/\.onnx$/, '');
  const meta = JSON.parse(fs.readFileSync(base + '.check.json'));
  const buf = fs.readFileSync(base + '.check.f32');
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const nIn = meta.input.reduce((a, b) => a * b, 1);
  const got = await logits(await session(model), all.slice(0, nIn), meta.input);
  const want = all.slice(nIn);
  const c = meta.logits[1], cos = [];
  let d = 0;
  for (let i = 0; i < want.length; i++) d = Math.max(d, Math.abs(got[i] - want[i]));
  for (let r = 0; r < meta.logits[0]; r++) cos.push(+cosine(got.slice(r * c, r * c + c), want.slice(r * c, r * c + c)).toFixed(6));
  console.log(JSON.stringify({ check: model, against: base + '.check.f32', cosine: cos, max_abs_diff: d }));
}

// run writes each model's logits on the inputs (float32, little-endian, (N, C, H, W) = --shape) to
// --out/NAME.logits.f32, in batches of --batch.
async function logitsOf(models) {
  const shape = arg('shape').split(',').map(Number), bs = +arg('batch', 100), out = arg('out');
  const buf = fs.readFileSync(arg('inputs'));
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const per = shape[1] * shape[2] * shape[3], n = shape[0];
  if (shape.length !== 4 || x.length !== n * per) throw new Error(`${arg('inputs')}: ${x.length} floats, want ${shape.join('×')}`);
  for (const m of models) {
    const s = await session(m), parts = [];
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i += bs) {
      const b = Math.min(bs, n - i);
      parts.push(Buffer.from((await logits(s, x.slice(i * per, (i + b) * per), [b, shape[1], shape[2], shape[3]])).buffer));
    }
    const file = path.join(out, path.basename(m, '.onnx') + '.logits.f32');
    fs.writeFileSync(file, Buffer.concat(parts));
    console.log(JSON.stringify({ peer: 'onnxruntime ' + ort.env.versions.common, model: m, logits: file, images: n,
      ms: +(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1) }));
  }
}

const models = process.argv.filter((a) => a.endsWith('.onnx'));
let run;
if (process.argv.includes('--check') && models.length === 2) run = check(models[0], models[1]);
else if (arg('inputs') && arg('shape') && arg('out') && models.length > 0) run = logitsOf(models);
else { console.error('usage: node ort_eval.js --check MODEL.onnx REF.onnx | --inputs X.f32 --shape N,C,H,W --out DIR MODEL.onnx ...'); process.exit(2); }
run.catch((e) => { console.error(e); process.exit(1); });
