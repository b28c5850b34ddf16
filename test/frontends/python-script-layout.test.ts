/**
 * A training script laid out as nanoGPT's train.py is: defaults at module level, a configurator exec'd over them,
 * the model built inside `if init_from == 'scratch':`, and an endless `while True:` training loop at module level.
 * Before, the loop spent the file's whole evaluation budget, the budget error escaped the model search as
 * "internal error ([object Object])", the model assigned only inside a branch was not a candidate, and a warning
 * inside the loop was repeated once per iteration (7,000 copies). The configurator is read with the run's arguments
 * (scriptExec.ts: open, exec, globals(), literal_eval); one WAP cannot read leaves a warning on every model.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { assessCompleteness } from '../../src/core/completeness';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';
import { NANOGPT, nanogptParams } from './nanogptTruth';

const nanogpt = NANOGPT;
const file = join(nanogpt, 'configured_train.py');

before(async () => {
  await initFrontends();
});

const read = (options: AnalyzeOptions = {}, text = readFileSync(file, 'utf8')) => analyzeSource(file, text, options, { workspaceFolders: [nanogpt] });

test('the model a script builds inside `if init_from == "scratch":` is read, with the sizes the script writes, as torch counts them', async () => {
  const r = await read();
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), []);
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  assert.equal(model.layers.filter((l) => /^transformer\.h\.\d+\.attn\.c_attn$/.test(l.name)).length, 4, 'n_layer = 4, not GPTConfig’s default 12');
  assert.equal(model.totals.params, nanogptParams('n_layer=4, n_head=4, n_embd=256, block_size=256, bias=False, vocab_size=50304, dropout=0.0'));
  // The model is ranged where the script builds it, in the branch.
  assert.match(readFileSync(file, 'utf8').split('\n')[model.range!.line - 1]!, /model = GPT\(gptconf\)/);
});

test('the exec’d configurator is read with the run’s arguments: a config file over the defaults, then --key=value pairs', async () => {
  const blocks = (m: { layers: Array<{ name: string }> }) => m.layers.filter((l) => /^transformer\.h\.\d+\.attn\.c_attn$/.test(l.name)).length;
  const given = await read({ scriptArguments: { words: ['config/small.py', '--n_layer=3', '--dropout=0.1', '--init_from=scratch'], source: 'run.sh' } });
  const model = given.models.find((m) => m.name === 'model')!;
  assert.equal(blocks(model), 3, '--n_layer=3 after the file’s n_layer = 2');
  assert.equal(model.totals.params, nanogptParams('n_layer=3, n_head=8, n_embd=512, block_size=128, bias=False, vocab_size=50304'));
  const note = model.diagnostics.find((d) => d.code === 'script-arguments');
  assert.equal(note?.line, 28);
  assert.match(note!.message, /^`exec\(open\('configurator\.py'\)\.read\(\)\)` reads the command line: it is read with the arguments run\.sh gives \(config\/small\.py --n_layer=3 --dropout=0\.1 --init_from=scratch\)$/);
  assert.deepEqual(model.diagnostics.filter((d) => d.code === 'rewritten-globals'), []);
  // Its plans repeat which command line sized the model.
  const plan = planModel(model, resolveCluster('a100x8', {}), { batch: 64, objective: 'throughput', strategies: 'hybrid', optimizer: 'adam' });
  assert.ok(plan.diagnostics.some((d) => d.message === note!.message && d.line === 28), JSON.stringify(plan.diagnostics));
  // Run with no arguments, the written defaults, said as such.
  const bare = (await read()).models.find((m) => m.name === 'model')!;
  assert.equal(blocks(bare), 4);
  assert.match(bare.diagnostics.find((d) => d.code === 'script-arguments')!.message, /as the script run with no arguments, with the values the file writes/);
});

test('an exec WAP cannot read (a path the run computes) makes every model say it was read with the written defaults', async () => {
  const text = readFileSync(file, 'utf8').replace("exec(open('configurator.py').read())", "exec(open(os.environ['CONFIGURATOR']).read())");
  const r = await read({}, text);
  const model = r.models.find((m) => m.name === 'model')!;
  const rewrite = model.diagnostics.filter((d) => d.code === 'rewritten-globals');
  assert.deepEqual(rewrite.map((d) => [d.line, d.severity]), [[28, 'warning']]);
  assert.match(rewrite[0]!.message, /read with the values the file writes/);
  const plan = planModel(model, resolveCluster('a100x8', {}), { batch: 64, objective: 'throughput', strategies: 'hybrid', optimizer: 'adam' });
  assert.ok(plan.diagnostics.some((d) => d.severity === 'warning' && d.message === rewrite[0]!.message && d.line === 28), JSON.stringify(plan.diagnostics));
});

test('the module-level training loop is cut with a note and no budget error; a warning inside it is said once', async () => {
  const r = await read();
  const all = [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics)];
  assert.deepEqual(all.filter((d) => d.code === 'partial-eval' || d.code === 'internal-error'), []);
  const cut = all.filter((d) => d.code === 'script-loop-cut');
  assert.deepEqual(cut.map((d) => [d.line, d.severity]), [[56, 'info']]);
  const keys = all.map((d) => `${d.file ?? ''}:${d.line}:${d.column}-${d.endLine}:${d.endColumn}:${d.message}`);
  assert.equal(new Set(keys).size, keys.length, 'no diagnostic repeated');
});

test('a file with no rewrite of its globals carries no such warning', async () => {
  const plain = join(nanogpt, 'train.py');
  const r = await analyzeSource(plain, readFileSync(plain, 'utf8'), {}, { workspaceFolders: [nanogpt] });
  assert.ok(r.models.length > 0);
  assert.deepEqual(r.models.flatMap((m) => m.diagnostics).filter((d) => d.code === 'rewritten-globals'), []);
});

test('the autocast the script builds is its run precision, with the dtype its configurator leaves; a dtype the run picks keeps only the holding', async () => {
  const runOf = async (words: string[], text?: string) => (await read({ scriptArguments: { words, source: 'run.sh' } }, text)).models.find((m) => m.name === 'model')!.runPrecision;
  const written = await runOf([]);
  assert.deepEqual([written?.precision, written?.holding], ['bf16', 'autocast']);
  assert.equal(written?.source, 'configured_train.py:38 (torch.amp.autocast, dtype torch.bfloat16)');
  const half = await runOf(['--dtype=float16']);
  assert.deepEqual([half?.precision, half?.holding], ['fp16', 'autocast']);
  // CUDA autocast disables itself at float32: the run trains in fp32.
  const full = await runOf(['--dtype=float32']);
  assert.deepEqual([full?.precision, full?.holding], ['fp32', undefined]);
  // …on TF32 tensor cores where the script lets fp32 matmuls use them (nanoGPT's allow_tf32, llm.c's --tensorcores).
  const withTf32 = readFileSync(file, 'utf8').replace("device = 'cuda'", "device = 'cuda'\ntorch.backends.cuda.matmul.allow_tf32 = True");
  const tf32 = await runOf(['--dtype=float32'], withTf32);
  assert.equal(tf32?.precision, 'tf32');
  assert.match(tf32!.source, /, with TF32 matmuls from configured_train\.py:37 \(torch\.backends\.cuda\.matmul\.allow_tf32 = True\)$/);
  const highest = await runOf(['--dtype=float32'], withTf32.replace('torch.backends.cuda.matmul.allow_tf32 = True', "torch.backends.cuda.matmul.allow_tf32 = True\ntorch.set_float32_matmul_precision('highest')"));
  assert.equal(highest?.precision, 'fp32', 'the last switch holds');
  assert.equal((await runOf([], withTf32))?.precision, 'bf16', 'TF32 changes fp32 work only');
  // nanoGPT's own default asks the GPU: WAP cannot know, so the plan keeps the GPU's default dtype, held as autocast holds it.
  const asked = readFileSync(file, 'utf8').replace("dtype = 'bfloat16'", "dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'");
  const picked = (await read({}, asked)).models.find((m) => m.name === 'model')!;
  assert.deepEqual([picked.runPrecision?.precision, picked.runPrecision?.holding], [undefined, 'autocast']);
  const options = { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam' } as const;
  const onA100 = planModel(picked, resolveCluster('a100x8', {}), options);
  assert.ok(onA100.feasible);
  if (onA100.feasible) {
    assert.deepEqual([onA100.plan.setup?.precision, onA100.plan.setup?.ampStyle], ['bf16', 'autocast']);
    assert.match(onA100.plan.setup!.precisionReason!, /^default: /);
  }
  // The same choice as a statement, over a default written before it: neither branch is read, and the name is unknown.
  const statement = readFileSync(file, 'utf8').replace("dtype = 'bfloat16'", "dtype = 'float16'\nif torch.cuda.is_available() and torch.cuda.is_bf16_supported():\n    dtype = 'bfloat16'");
  const undecided = await read({}, statement);
  const held = undecided.models.find((m) => m.name === 'model')!;
  assert.deepEqual([held.runPrecision?.precision, held.runPrecision?.holding], [undefined, 'autocast']);
  assert.ok([...undecided.diagnostics, ...held.diagnostics].some((d) => d.code === 'gpu-query' && d.line === 26));
  // A dtype the GPU cannot run is refused with where it came from.
  const bf16 = (await read()).models.find((m) => m.name === 'model')!;
  const onV100 = planModel(bf16, resolveCluster('dgx1-v100', {}), options);
  assert.equal(onV100.feasible, false);
  if (!onV100.feasible) assert.match(onV100.reason, /no peakTflops\.bf16 .* \(bf16 is from configured_train\.py:38 \(torch\.amp\.autocast, dtype torch\.bfloat16\)\)$/);
});

test('an autocast inside a forward is the model’s own, not the run’s precision', async () => {
  const source = [
    'import torch',
    'from torch import nn',
    'class Net(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.fc = nn.Linear(8, 8)',
    '    def forward(self, x):',
    "        keep = torch.autocast('cuda', enabled=False)",
    '        with keep:',
    '            return self.fc(x.float())',
    'model = Net()',
    "ctx = torch.autocast('cuda', dtype=torch.bfloat16)",
  ].join('\n');
  const asRun = (await analyzeSource(join(nanogpt, 'inline_net.py'), source, {}, { workspaceFolders: [nanogpt] })).models[0]!;
  assert.deepEqual([asRun.runPrecision?.precision, asRun.runPrecision?.holding], ['bf16', 'autocast']);
  const forwardOnly = (await analyzeSource(join(nanogpt, 'inline_net.py'), source.replace(/\nctx = .*$/, ''), {}, { workspaceFolders: [nanogpt] })).models[0]!;
  assert.equal(forwardOnly.layers.length > 0, true);
  assert.equal(forwardOnly.runPrecision, undefined);
});

test('an autocast a training step enters inline, in a micro-step loop whose count the processes decide, on a device read at run time, is the run’s', async () => {
  // build-nanogpt's shape: `with torch.autocast(device_type=device, dtype=torch.bfloat16):` inside
  // `for micro_step in range(gradient_accumulation_steps):`, the accumulation divided by the world size, the device
  // an f-string of the local rank.
  const text = readFileSync(file, 'utf8')
    .replace("device = 'cuda'\n", "device = f'cuda:{int(os.environ[\"LOCAL_RANK\"])}'\n")
    .replace("ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype)\n", '')
    .replace('        with ctx:\n', '        with torch.autocast(device_type=device, dtype=torch.bfloat16):\n');
  const model = (await read({ scriptArguments: { words: ['config/small.py'], source: 'run.sh' } }, text)).models.find((m) => m.name === 'model')!;
  assert.deepEqual(model.runPrecision, { precision: 'bf16', holding: 'autocast', source: 'configured_train.py:58 (torch.autocast, dtype torch.bfloat16, on the GPU the plan is for: its device_type is read at run time)' });
  const once = model.diagnostics.filter((d) => d.code === 'accumulation-loop');
  assert.deepEqual(once.map((d) => d.line), [56]);
  assert.match(once[0]!.message, /^`gradient_accumulation_steps` is unknown here \(the script divides it by its processes\): WAP reads one micro-step of the loop/);
  // A CPU autocast changes nothing on a GPU, as before.
  const cpu = (await read({ scriptArguments: { words: ['config/small.py'], source: 'run.sh' } }, text.replace('device_type=device, dtype', "device_type='cpu', dtype"))).models.find((m) => m.name === 'model')!;
  assert.equal(cpu.runPrecision, undefined);
});

test('nanoGPT sizes its vocabulary from the dataset’s meta.pkl when one exists beside it, else 50304: os.path is read against the script’s folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-ospath-'));
  try {
    copyFileSync(join(nanogpt, 'model.py'), join(dir, 'model.py'));
    const script = [
      'import os',
      'import pickle',
      'import torch',
      'from model import GPTConfig, GPT',
      "dataset = 'shakespeare_char'",
      "meta_path = os.path.join('data', dataset, 'meta.pkl')",
      'meta_vocab_size = None',
      'if os.path.exists(meta_path):',
      "    with open(meta_path, 'rb') as f:",
      '        meta = pickle.load(f)',
      "    meta_vocab_size = meta['vocab_size']",
      'vocab_size = meta_vocab_size if meta_vocab_size is not None else 50304',
      'model = GPT(GPTConfig(n_layer=2, n_head=4, n_embd=128, block_size=64, vocab_size=vocab_size))',
      'optimizer = torch.optim.AdamW(model.parameters())',
    ].join('\n');
    writeFileSync(join(dir, 'train.py'), script);
    const analyse = async () => (await analyzeSource(join(dir, 'train.py'), script, {}, { workspaceFolders: [dir] })).models.find((m) => m.name === 'model')!;
    const unprepared = await analyse();
    assert.equal(unprepared.totals.params, nanogptParams('n_layer=2, n_head=4, n_embd=128, block_size=64, vocab_size=50304'));
    assert.equal(assessCompleteness(unprepared.layers, unprepared.diagnostics).complete, true);
    // Prepared: the vocabulary is in a pickle WAP does not read, so the model says it is incomplete rather than guess.
    mkdirSync(join(dir, 'data', 'shakespeare_char'), { recursive: true });
    writeFileSync(join(dir, 'data', 'shakespeare_char', 'meta.pkl'), 'not read');
    const prepared = await analyse();
    assert.notEqual(prepared.totals.params, unprepared.totals.params);
    const completeness = assessCompleteness(prepared.layers, prepared.diagnostics);
    assert.equal(completeness.complete, false, 'an unknown vocabulary leaves the model incomplete, said');
    assert.ok(completeness.reasons.length > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a syntax error in a file the run execs or imports is said where it is, and carried by the model', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-unparsed-'));
  try {
    for (const name of ['model.py', 'configurator.py', 'configured_train.py']) copyFileSync(join(nanogpt, name), join(dir, name));
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config', 'broken.py'), 'n_layer = 2\nn_head = (8\n');
    const text = readFileSync(join(dir, 'configured_train.py'), 'utf8');
    const analyse = (words: string[]) => analyzeSource(join(dir, 'configured_train.py'), text, { scriptArguments: { words, source: 'run.sh' } }, { workspaceFolders: [dir] });
    // Python compiles the config before running it: none of it runs (n_layer stays 4), and the run stops there.
    const execd = await analyse(['config/broken.py']);
    const model = execd.models.find((m) => m.name === 'model')!;
    assert.equal(model.layers.filter((l) => /^transformer\.h\.\d+\.attn\.c_attn$/.test(l.name)).length, 4);
    const said = model.diagnostics.find((d) => d.code === 'parse-error');
    assert.equal(said?.file, join(dir, 'config', 'broken.py'));
    assert.equal(said?.line, 2);
    assert.match(said!.message, /in broken\.py: exec raises SyntaxError before running any of it, so the run stops there/);
    assert.equal(said?.incomplete, undefined, 'the script’s own values were read in full');
    // A module with an unclosed call: imported in part, said at its error, and the model built from it is incomplete.
    // (Its own folder: the reader keeps a file's stat for a moment, as the server does between change events.)
    const other = join(dir, 'cut');
    mkdirSync(other);
    for (const name of ['configurator.py', 'configured_train.py']) copyFileSync(join(nanogpt, name), join(other, name));
    writeFileSync(join(other, 'model.py'), readFileSync(join(nanogpt, 'model.py'), 'utf8').replace('self.c_proj = nn.Linear(', 'self.c_proj = nn.Linear(('));
    const imported = await analyzeSource(join(other, 'configured_train.py'), text, {}, { workspaceFolders: [other] });
    const partial = imported.models.find((m) => m.name === 'model');
    const unparsed = [...imported.diagnostics, ...(partial?.diagnostics ?? [])].find((d) => d.code === 'parse-error' && d.file === join(other, 'model.py'));
    assert.ok(unparsed, JSON.stringify(imported.diagnostics.map((d) => d.message)));
    assert.match(unparsed.message, /in model\.py: Python cannot import model, so the run stops at its import/);
    if (partial) assert.equal(assessCompleteness([], partial.diagnostics).complete, false);
    else assert.ok(imported.diagnostics.some((d) => /the file does not parse \(line \d+: Syntax error/.test(d.message)), 'a name lost past the error says why');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
