/**
 * The real CLI bundle on models it can read only in part, on files without a
 * model, and on Hugging Face configs (issue 11 items 3 and 4): the table and
 * the JSON say "incomplete", `--json` always prints an object with
 * diagnostics (exit 2 when there is no model), and the plan report carries
 * `incomplete`.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'wap-incomplete-cli-'));
let cli = '';

// A model with one layer from an import WAP cannot resolve (a real file, shared with the other incomplete-model test).
const PARTIAL = readFileSync(join(__dirname, '..', 'fixtures', 'incomplete', 'partial.py'), 'utf8');

before(() => {
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  cli = join(work, 'cli.js');
  copyFileSync(join(root, 'dist', 'cli.js'), cli);
  writeFileSync(join(work, 'partial.py'), PARTIAL);
  writeFileSync(join(work, 'nomodel.py'), 'import os\nprint(os.getcwd())\n');
  writeFileSync(join(work, 'hub.py'), 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("nobody/not-cached")\n');
});

function wap(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, HF_HUB_CACHE: join(work, 'hub-cache') } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('analyze: the table says incomplete above the layers and on the total; the dropped block is a diagnostic with its range', () => {
  const r = wap('analyze', join(work, 'partial.py'));
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[1], /^incomplete: 1 layer opaque, 1 layer without a shape — totals cover only what WAP could read \(.*mystery\.FancyBlock/);
  // fc2 after the unknown block has no known input, but its Linear(32, 4) weights are its own: 544 + 132.
  assert.match(r.stdout, /^fc2\s+Linear\s+11\s+\?\s+132\b/m);
  assert.match(r.stdout, /^Total \(incomplete\)\s+676\b/m);
  assert.match(r.stdout, /partial\.py:14:25: warning: block \(block\): .*'mystery\.FancyBlock' is imported from 'mystery', which could not be resolved/);
});

test('analyze --json: completeness per model', () => {
  const r = wap('analyze', join(work, 'partial.py'), '--json');
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(
    { complete: out.models[0].completeness.complete, opaque: out.models[0].completeness.opaqueLayers, unshaped: out.models[0].completeness.unshapedLayers },
    { complete: false, opaque: 1, unshaped: 1 },
  );
  const full = JSON.parse(wap('analyze', 'examples/pytorch/alexnet.py', '--json').stdout);
  assert.equal(full.models[0].completeness.complete, true);
});

test('--json with no model: exit 2 and a JSON object whose diagnostics say why (the hub id, where WAP looked)', () => {
  const none = wap('analyze', join(work, 'nomodel.py'), '--json');
  assert.equal(none.code, 2);
  const a = JSON.parse(none.stdout);
  assert.deepEqual(a.models, []);
  assert.equal(a.diagnostics[0].code, 'no-model');
  assert.match(a.diagnostics[0].message, /no model found/);

  const hub = wap('analyze', join(work, 'hub.py'), '--json');
  assert.equal(hub.code, 2);
  const h = JSON.parse(hub.stdout);
  const missing = h.diagnostics.find((d: { code?: string }) => d.code === 'hf-config-missing');
  assert.ok(missing, hub.stdout);
  assert.equal(missing.line, 2);
  assert.match(missing.message, /nobody\/not-cached/);
  assert.ok(missing.message.includes(join(work, 'hub-cache', 'models--nobody--not-cached')), missing.message);
  assert.match(missing.message, /huggingface-cli download nobody\/not-cached config\.json/);

  const plan = wap('plan', join(work, 'nomodel.py'), '--json');
  assert.equal(plan.code, 2);
  assert.equal(JSON.parse(plan.stdout).diagnostics[0].code, 'no-model');
});

test('plan: the report carries incomplete and the table says so', () => {
  const json = wap('plan', join(work, 'partial.py'), '--json', '--cluster', 'pcie4');
  assert.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout);
  assert.equal(report.incomplete.summary, 'incomplete: 1 layer opaque, 1 layer without a shape');
  assert.equal(report.incomplete.opaqueLayers, 1);
  const table = wap('plan', join(work, 'partial.py'), '--cluster', 'pcie4');
  assert.match(table.stdout, /^model incomplete: 1 layer opaque, 1 layer without a shape \(.*\): the plan covers only the layers WAP could read$/m);
  const full = JSON.parse(wap('plan', 'examples/pytorch/alexnet.py', '--json').stdout);
  assert.equal(full.incomplete, undefined);
});

test('Hugging Face: a training script reading ./llama-2-7b and the config.json itself give Llama-2-7B exactly', () => {
  const script = JSON.parse(wap('analyze', 'test/fixtures/huggingface/train_llama.py', '--json').stdout);
  assert.equal(script.models[0].totals.params, 6_738_415_616);
  const config = JSON.parse(wap('analyze', 'test/fixtures/huggingface/llama-2-7b/config.json', '--json', '--input', '512').stdout);
  assert.equal(config.models[0].totals.params, 6_738_415_616);
  assert.deepEqual(config.models[0].input, [512]);
  assert.ok(config.models[0].layers.some((l: { name: string }) => l.name === 'model.layers.31.self_attn.q_proj'));
});
