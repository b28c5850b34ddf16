import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'wap-analyze-'));
let cli = '';

before(() => {
  // The real bundle, copied away so another room's concurrent build cannot swap it mid-test.
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  cli = join(work, 'cli.js');
  copyFileSync(join(root, 'dist', 'cli.js'), cli);
});

function wap(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, 'analyze', ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface JsonOut {
  file: string;
  framework: string;
  batch?: number;
  models: Array<{
    name: string;
    line: number;
    input: number[];
    layers: Array<{ name: string; type: string; line: number; outputShape: number[] | null; params: number; forwardFlops: number }>;
    totals: { params: number; forwardFlops: number };
  }>;
  diagnostics: Array<{ severity: string; message: string; line: number; column: number }>;
}

test('table: one row per layer with name, type, line, shape, params and GFLOPs, then totals', () => {
  const r = wap('examples/tfjs/cnn.ts');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0], /^Model createCifarCnn \(line 30, tfjs, channels_last\), input \[32, 32, 3\]$/);
  assert.match(lines[1], /^Layer\s+Type\s+Line\s+Output shape\s+Params\s+Fwd GFLOPs$/);
  const row = lines.find((l) => l.startsWith('conv2d_Conv2D2 '))!;
  assert.deepEqual(row.split(/\s{2,}/), ['conv2d_Conv2D2', 'conv2d', '24', '[32, 32, 32]', '9,248', '0.0189']);
  assert.match(lines.find((l) => l.startsWith('Total'))!, /^Total\s+814,570\s+0\.0790$/);
});

test('--json follows the contract; --batch adds "batch" and scales the table only', () => {
  const r = wap('examples/tfjs/cnn.ts', '--json', '--batch', '32');
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as JsonOut;
  assert.equal(out.file, 'examples/tfjs/cnn.ts');
  assert.equal(out.framework, 'tfjs');
  assert.equal(out.batch, 32);
  assert.equal(out.models.length, 1);
  const m = out.models[0];
  assert.equal(m.name, 'createCifarCnn');
  assert.equal(m.line, 30);
  assert.deepEqual(m.input, [32, 32, 3]);
  assert.equal(m.layers.length, 19);
  assert.deepEqual(Object.keys(m.layers[0]).filter((k) => ['name', 'type', 'line', 'outputShape', 'params', 'forwardFlops'].includes(k)).sort(), ['forwardFlops', 'line', 'name', 'outputShape', 'params', 'type']);
  assert.deepEqual(m.layers[0].outputShape, [32, 32, 32]);
  assert.equal(m.totals.params, 814_570);
  assert.equal(m.totals.params, m.layers.reduce((s, l) => s + l.params, 0));
  assert.deepEqual(out.diagnostics, []);
  const table = wap('examples/tfjs/cnn.ts', '--batch', '32');
  const total = table.stdout.split('\n').find((l) => l.startsWith('Total'))!;
  assert.ok(total.endsWith(((m.totals.forwardFlops * 32) / 1e9).toFixed(4)), total);
  assert.match(table.stdout, /Fwd GFLOPs \(batch 32\)/);
});

test('--input overrides the stated shape; Keras JSON and PyTorch files go through the same command', () => {
  const k = JSON.parse(wap('examples/keras-json/model.json', '--json', '--input', '56,56,1').stdout) as JsonOut;
  assert.equal(k.framework, 'keras-json');
  assert.deepEqual(k.models[0].input, [56, 56, 1]);
  // dense after flatten: 26·26·64 inputs at 56×56 instead of 12·12·64 at 28×28.
  assert.equal(k.models[0].layers.find((l) => l.name === 'dense')!.params, 26 * 26 * 64 * 128 + 128);
  const py = wap('examples/pytorch/alexnet.py', '--json');
  assert.equal(py.code, 0, py.stderr);
  const p = JSON.parse(py.stdout) as JsonOut;
  assert.equal(p.framework, 'pytorch');
  assert.ok(p.models.length >= 1 && p.models[0].layers.length > 0);
  assert.ok(p.models[0].totals.params > 0);
});

test('warnings are printed as file:line:col: severity: message and still exit 0', () => {
  const file = join(work, 'custom.ts');
  writeFileSync(file, "const model = tf.sequential();\nmodel.add(tf.layers.dense({ units: 4, inputShape: [3] }));\nmodel.add(tf.layers.myCustomThing({}));\n");
  const r = wap(file);
  assert.equal(r.code, 0, r.stderr);
  const printed = r.stdout.split('\n').filter((l) => l.startsWith(`${file}:`));
  assert.equal(printed.length, 1, r.stdout);
  assert.match(printed[0], /:3:11: warning: .*unknown TF\.js layer 'tf\.layers\.myCustomThing'/);
  const j = JSON.parse(wap(file, '--json').stdout) as JsonOut;
  assert.deepEqual(j.diagnostics.map((d) => [d.severity, d.line, d.column]), [['warning', 3, 11]]);
});

test('exit 2 with one line: bad flags, unreadable file, no model, broken topology', () => {
  const cases: Array<[string[], RegExp]> = [
    [['examples/tfjs/cnn.ts', '--input', '3,x,224'], /--input expects positive integers/],
    [['examples/tfjs/cnn.ts', '--batch', '0'], /--batch expects a positive integer/],
    [['examples/tfjs/missing.ts'], /cannot read 'examples\/tfjs\/missing.ts' \(ENOENT\)/],
    [['examples/pytorch/ds_config.json'], /no model found in 'examples\/pytorch\/ds_config.json'/],
    [['README.md'], /expected a \.py, \.ts\/\.js or \.json file/],
    [['examples/tfjs/cnn.ts', '--bogus'], /Unknown option '--bogus'/],
  ];
  const broken = join(work, 'broken.json');
  writeFileSync(broken, readFileSync(join(root, 'examples/keras-json/model.json'), 'utf8').slice(0, 400));
  cases.push([[broken], /no model found in .*broken\.json.*: \d+:\d+: invalid JSON in model topology/]);
  // A class that needs arguments and nothing that builds it: the line says which class was skipped, why, and where WAP looks.
  const needsArgs = join(work, 'needs_args.py');
  writeFileSync(needsArgs, 'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self, width):\n        super().__init__()\n        self.fc = nn.Linear(width, width)\n');
  cases.push([[needsArgs], /no model found in .*needs_args\.py': 2:1: Model classes in this file that WAP did not read, since nothing in it builds them: Net \(its constructor needs `width`\)\..*\. WAP reads a model built at module level \(`model = Net\(\)`\), by a function it can call without arguments/]);
  // The first warning ends its own sentence: one period before what WAP reads, never two.
  const missing = join(work, 'missing_import.py');
  writeFileSync(missing, 'from mystery import Net\nmodel = Net()\n');
  cases.push([[missing], /no model found in .*missing_import\.py': 1:\d+: module 'mystery' could not be resolved: .*opaque\. WAP reads a model built at module level/]);
  for (const [args, message] of cases) {
    const r = wap(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^wap: /);
    assert.match(lines[0], message);
  }
});
