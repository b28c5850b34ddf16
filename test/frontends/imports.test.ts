/**
 * Following Python imports statically (src/frontends/imports + the evaluator's
 * module loader) on real files: the nanoGPT layout, packages with relative
 * imports and `__init__` re-exports, circular and missing imports, timm's
 * registry, and torchvision as installed by Debian (read from the sys.path of
 * /usr/bin/python3, never imported). Truth comes from torch itself.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalysisResult } from '../../src/core/ir';
import { analyzeSource, initFrontends, type ImportOptions } from '../../src/frontends';
import { probePython } from '../../src/profiler/pythonEnv';

const root = join(__dirname, '..', '..');
const fixtures = join(root, 'test', 'fixtures');
const PYTHON = '/usr/bin/python3';
const hasTorch = (() => {
  try {
    execFileSync(PYTHON, ['-c', 'import torch, torchvision'], { timeout: 60_000, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

async function analyze(file: string, imports: ImportOptions): Promise<AnalysisResult> {
  return analyzeSource(file, readFileSync(file, 'utf8'), {}, imports);
}

/** Trainable parameters torch counts for `expr`, with `path` first on sys.path (test fixtures only, never user code). */
function torchParams(path: string, setup: string, expr: string): number {
  const script = `import sys; sys.path.insert(0, ${JSON.stringify(path)})\n${setup}\nm = ${expr}\nprint(sum(p.numel() for p in m.parameters()))`;
  return Number(execFileSync(PYTHON, ['-c', script], { encoding: 'utf8', timeout: 120_000 }).trim());
}

before(async () => {
  await initFrontends();
});

test('nanoGPT layout: train.py builds GPT from the sibling model.py with exact params; layers point at model.py', { skip: !hasTorch && 'needs torch in /usr/bin/python3' }, async () => {
  const dir = join(fixtures, 'nanogpt');
  const r = await analyze(join(dir, 'train.py'), { workspaceFolders: [dir] });
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, `models: ${r.models.map((m) => m.name).join(', ')}; diagnostics: ${JSON.stringify(r.diagnostics)}`);
  const truth = torchParams(dir, 'from model import GPT, GPTConfig', 'GPT(GPTConfig(n_layer=24, n_head=16, n_embd=1024, block_size=512, bias=False))');
  assert.equal(model.totals.params, truth);
  const attn = model.layers.find((l) => l.name === 'transformer.h.0.attn.c_attn');
  assert.ok(attn, 'module names as torch names them');
  assert.equal(attn.range.file, join(dir, 'model.py'));
  const source = readFileSync(join(dir, 'model.py'), 'utf8').split('\n');
  assert.match(source[attn.range.line - 1], /self\.c_attn = nn\.Linear/);
  // The model itself is where train.py builds it.
  assert.equal(model.range.file, undefined);
  assert.match(readFileSync(join(dir, 'train.py'), 'utf8').split('\n')[model.range.line - 1], /^model = GPT\(/);
  assert.deepEqual(r.diagnostics.filter((d) => d.severity !== 'info'), []);
});

test('without an import context, imported names stay library paths (as before)', async () => {
  const file = join(fixtures, 'nanogpt', 'train.py');
  const r = await analyzeSource(file, readFileSync(file, 'utf8'));
  assert.equal(r.models.length, 0);
});

test('package: __init__ star re-export with __all__, relative imports up two levels, namespace sub-package', { skip: !hasTorch && 'needs torch' }, async () => {
  const dir = join(fixtures, 'imports');
  const r = await analyze(join(dir, 'main.py'), { workspaceFolders: [dir] });
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics));
  assert.equal(model.totals.params, torchParams(dir, 'from proj.vision import TinyNet', 'TinyNet(num_classes=10)'));
  assert.deepEqual(
    model.layers.filter((l) => l.workload.params > 0).map((l) => l.name),
    ['stem.0', 'stem.1', 'stage.0.0', 'stage.0.1', 'stage.1.0', 'stage.1.1', 'head'],
  );
  const head = model.layers.find((l) => l.name === 'head')!;
  assert.equal(head.range.file, join(dir, 'proj', 'common', 'ops.py'));
  assert.deepEqual(r.diagnostics.filter((d) => d.severity !== 'info'), []);
});

test('circular import: one clear diagnostic naming the cycle, the model still read, within 1 s', async () => {
  const dir = join(fixtures, 'imports', 'circular');
  const started = performance.now();
  const r = await analyze(join(dir, 'a.py'), { workspaceFolders: [dir] });
  assert.ok(performance.now() - started < 1000);
  const problems = [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics)].filter((d) => d.severity !== 'info');
  assert.equal(problems.length, 1, JSON.stringify(problems));
  assert.match(problems[0].message, /circular import \(a\.py → b\.py → a\.py\)/);
  assert.equal(problems[0].file, join(dir, 'b.py'));
  assert.equal(problems[0].line, 3);
  assert.equal(r.models[0]?.totals.params, 32 * 32 + 32 + 32 * 4 + 4);
});

test('missing library: one diagnostic on the import line naming the package, the interpreter and where it looked', async () => {
  const file = join(fixtures, 'imports', 'missing.py');
  const started = performance.now();
  const r = await analyze(file, { workspaceFolders: [join(fixtures, 'imports')], libraryRoots: ['/usr/lib/python3/dist-packages'], interpreter: PYTHON });
  assert.ok(performance.now() - started < 1000);
  const problems = r.diagnostics.filter((d) => d.severity !== 'info');
  assert.equal(problems.length, 1, JSON.stringify(problems));
  assert.equal(problems[0].line, 1);
  assert.equal(problems[0].code, 'import-unresolved');
  assert.match(problems[0].message, /'timm' is not installed for \/usr\/bin\/python3/);
  assert.match(problems[0].message, /dist-packages/);
  assert.equal(r.models.length, 0);
});

test('untrusted (no library roots): workspace imports still followed, library imports say why they were not', async () => {
  const file = join(fixtures, 'imports', 'missing.py');
  const wanted = new Set<string>();
  const r = await analyze(file, { workspaceFolders: [join(fixtures, 'imports')], libraryNote: 'the workspace is not trusted', wantedLibraries: wanted });
  assert.match(r.diagnostics[0]?.message ?? '', /the workspace is not trusted/);
  assert.deepEqual([...wanted], ['timm']);
});

test('timm.create_model reads the registry from timm\'s source (@register_model) and passes kwargs', async () => {
  const dir = join(fixtures, 'timm-env');
  const r = await analyze(join(dir, 'train.py'), { workspaceFolders: [dir], libraryRoots: [join(dir, 'site-packages')] });
  const model = r.models[0];
  assert.ok(model, JSON.stringify(r.diagnostics));
  // tinyresnet_wide: width 64, num_classes 7 → conv 3·64·7·7 + bn 2·64 + fc 64·7+7.
  assert.equal(model.totals.params, 3 * 64 * 49 + 128 + 64 * 7 + 7);
  assert.equal(model.layers.find((l) => l.name === 'fc')?.range.file, join(dir, 'site-packages', 'timm', 'models', 'tinyresnet.py'));
});

const torchvision = '/usr/lib/python3/dist-packages/torchvision/models/resnet.py';

test('torchvision.models.resnet50() read from the installed torchvision: 25,557,032 params, torch module names', { skip: !existsSync(torchvision) && 'torchvision not installed' }, async () => {
  const info = await probePython(PYTHON);
  assert.ok(info.ok, info.reason);
  const dir = join(fixtures, 'imports');
  const text = 'import torchvision\n\nmodel = torchvision.models.resnet50()\n';
  const r = await analyzeSource(join(dir, 'tv_resnet50.py'), text, {}, { workspaceFolders: [dir], libraryRoots: info.sysPath, interpreter: PYTHON });
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics));
  assert.equal(model.totals.params, 25_557_032);
  const conv = model.layers.find((l) => l.name === 'layer1.0.conv1');
  assert.ok(conv);
  assert.equal(conv.range.file, torchvision);
  assert.deepEqual(r.diagnostics.filter((d) => d.severity !== 'info'), []);
});

test('from torchvision.models import resnet18: an imported builder nothing instantiates is offered with its defaults', { skip: !existsSync(torchvision) && 'torchvision not installed' }, async () => {
  const info = await probePython(PYTHON);
  const dir = join(fixtures, 'imports');
  const r = await analyzeSource(join(dir, 'tv_offer.py'), 'from torchvision.models import resnet18\n', {}, { workspaceFolders: [dir], libraryRoots: info.sysPath });
  assert.deepEqual(r.models.map((m) => [m.name, m.totals.params]), [['resnet18', 11_689_512]]);
});

test('an imported model class taking a fully defaulted config is offered as GPT(GPTConfig()) when nothing builds it', { skip: !hasTorch && 'needs torch' }, async () => {
  const dir = join(fixtures, 'nanogpt');
  const r = await analyzeSource(join(dir, 'offer.py'), 'from model import GPT, GPTConfig\n', {}, { workspaceFolders: [dir] });
  assert.deepEqual(r.models.map((m) => m.name), ['GPT']);
  assert.equal(r.models[0].totals.params, torchParams(dir, 'from model import GPT, GPTConfig', 'GPT(GPTConfig())'));
});
