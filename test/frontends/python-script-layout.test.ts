/**
 * A training script laid out as nanoGPT's train.py is: defaults at module level, a configurator exec'd over them,
 * the model built inside `if init_from == 'scratch':`, and an endless `while True:` training loop at module level.
 * Before, the loop spent the file's whole evaluation budget, the budget error escaped the model search as
 * "internal error ([object Object])", the model assigned only inside a branch was not a candidate, and a warning
 * inside the loop was repeated once per iteration (7,000 copies).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';

const nanogpt = join(__dirname, '..', 'fixtures', 'nanogpt');
const file = join(nanogpt, 'configured_train.py');
const PYTHON = '/usr/bin/python3';

before(async () => {
  await initFrontends();
});

const read = () => analyzeSource(file, readFileSync(file, 'utf8'), {}, { workspaceFolders: [nanogpt] });

test('the model a script builds inside `if init_from == "scratch":` is read, with the sizes the script writes, as torch counts them', async () => {
  const r = await read();
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), []);
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  assert.equal(model.layers.filter((l) => /^transformer\.h\.\d+\.attn\.c_attn$/.test(l.name)).length, 4, 'n_layer = 4, not GPTConfig’s default 12');
  const truth = spawnSync(
    PYTHON,
    ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(nanogpt)})
from model import GPT, GPTConfig
m = GPT(GPTConfig(n_layer=4, n_head=4, n_embd=256, block_size=256, bias=False, vocab_size=50304, dropout=0.0))
print(sum(p.numel() for p in m.parameters()))`],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(truth.status, 0, `${PYTHON} needs torch (CI installs python3-torch): ${truth.stderr}`);
  assert.equal(model.totals.params, Number(truth.stdout.trim().split('\n').pop()));
  // The model is ranged where the script builds it, in the branch.
  assert.match(readFileSync(file, 'utf8').split('\n')[model.range!.line - 1]!, /model = GPT\(gptconf\)/);
});

test('the exec’d configurator makes every model of the file say it was read with the written defaults, and its plans repeat it', async () => {
  const r = await read();
  const model = r.models.find((m) => m.name === 'model')!;
  const rewrite = model.diagnostics.filter((d) => d.code === 'rewritten-globals');
  assert.equal(rewrite.length, 1);
  assert.equal(rewrite[0]!.line, 28);
  assert.equal(rewrite[0]!.severity, 'warning');
  assert.match(rewrite[0]!.message, /exec\(open\('configurator\.py'\)\.read\(\)\).*read with the values the file writes/);
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
