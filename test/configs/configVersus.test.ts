/**
 * `wap config` puts the user's config beside the best plan, for every format
 * that states a setup: the model is planned twice through the real planner
 * (once with the config's dimensions pinned, once free) and both appear in
 * the text line and in --json. Without --model, the model is the one the
 * script launched with the config builds.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configCommand } from '../../src/cli/commands/config';
import { capture } from '../cli/helpers';
import { readExample, root } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'wap-versus-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const model = join(root, 'test/configs/data/mlp.py');
const flags = ['--model', model, '--input', '8192', '--cluster', 'h100x8'];

const CONFIGS = ['ds_config.json', 'accelerate_fsdp.yaml', 'train_lightning.py', 'llama3_8b.toml', 'pretrain_llama.sh'];

for (const name of CONFIGS) {
  test(`wap config ${name}: "your config … · best plan …" in text and --json`, async () => {
    const file = join(dir, name);
    writeFileSync(file, readExample(`test/configs/data/llama/${name}`));
    const text = await capture(() => configCommand.run([file, ...flags]));
    assert.ok(text.code === 0 || text.code === 1, text.err);
    // "your config (8 GPUs, as run.sh launches it): …" names where its GPU count came from, or that the plan chose it.
    const line = text.out.split('\n').find((l) => /your config( \([^)]*\))?: /.test(l));
    assert.ok(line, text.out + text.err);
    assert.match(line, /your config( \([^)]*\))?: (\d[\d.]* (ms|s)\/step.*fits \(\d[\d.]* GB\/GPU\)|does not fit \(.+\)) · best plan: \d[\d.]* (ms|s)\/step/);

    const json = await capture(() => configCommand.run([file, ...flags, '--json']));
    const out = JSON.parse(json.out) as { yours: { feasible: boolean; stepTimeMs?: number }; best: { feasible: boolean; stepTimeMs: number; gpus: number }; versus: string; findings: unknown[] };
    assert.equal(out.best.feasible, true);
    assert.ok(out.best.stepTimeMs > 0 && out.best.gpus >= 1);
    assert.equal(typeof out.yours.feasible, 'boolean');
    assert.equal(out.versus, line.replace(`${file}: `, ''));
  });
}

test('without --model, the model is the one the launched script imports, and the output says how it was found', async () => {
  const sub = join(dir, 'project');
  mkdirSync(sub);
  copyFileSync(model, join(sub, 'mlp.py'));
  writeFileSync(join(sub, 'train.py'), 'import torch\nfrom mlp import WideMLP\n\nmodel = WideMLP()\n');
  writeFileSync(join(sub, 'launch.sh'), '#!/bin/bash\naccelerate launch --config_file accel.yaml train.py --lr 1e-4\n');
  const yaml = join(sub, 'accel.yaml');
  writeFileSync(yaml, 'distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n');
  const r = await capture(() => configCommand.run([yaml, '--input', '8192', '--cluster', 'h100x8', '--json']));
  const out = JSON.parse(r.out) as { model: { file: string; modelName: string; how: string }; versus: string };
  assert.equal(out.model.file, join(sub, 'mlp.py'));
  assert.equal(out.model.modelName, 'WideMLP');
  assert.match(out.model.how, /imported by train\.py, which launch\.sh runs with accelerate and accel\.yaml/);
  assert.match(out.versus, /^your config: /);

  const alone = join(dir, 'alone.yaml');
  writeFileSync(alone, 'distributed_type: MULTI_GPU\nnum_processes: 8\n');
  const none = await capture(() => configCommand.run([alone]));
  assert.match(none.err, /no model for .*alone\.yaml: no launch script names it; pass --model FILE/);
});
