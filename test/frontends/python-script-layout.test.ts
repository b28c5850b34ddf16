/**
 * A training script laid out as nanoGPT's train.py is: defaults at module level, a configurator exec'd over them,
 * the model built inside `if init_from == 'scratch':`, and an endless `while True:` training loop at module level.
 * Before, the loop spent the file's whole evaluation budget, the budget error escaped the model search as
 * "internal error ([object Object])", the model assigned only inside a branch was not a candidate, and a warning
 * inside the loop was repeated once per iteration (7,000 copies). The configurator is read with the run's arguments
 * (scriptExec.ts: open, exec, globals(), literal_eval); one WAP cannot read leaves a warning on every model.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
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
