/**
 * In the editor, without a wap.batchSize, a model is planned at the global batch the launch that trains it states:
 * run_clm.py as run.sh runs it (torchrun --nproc_per_node 8, --per_device_train_batch_size 4) is 32 samples a step,
 * in bf16. The hover says who stated it, and the CLI plans the same. Real files, the real server over stdio.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planCommand } from '../../src/cli/commands/plan';
import type { PlanReport } from '../../src/protocol/plan';
import { capture } from '../cli/helpers';
import { find, ROOT, TestServer } from './harness';

const script = join(ROOT, 'test/fixtures/hf-example/run_clm.py');
let server: TestServer;

before(async () => {
  server = await TestServer.start({ trusted: false, root: join(ROOT, 'test/fixtures'), settings: { cluster: 'a100x8' } });
});
after(async () => {
  await server?.stop();
});

test('the hover plans run_clm.py at run.sh’s global batch of 32 and says so; the CLI plans the same', async () => {
  const uri = await server.open(script);
  await server.planned(uri, 120_000);
  const text = readFileSync(script, 'utf8');
  const at = find(text, 'AutoModelForCausalLM.from_pretrained');
  const hover = await server.hoverText(uri, at.line, at.character + 4);
  assert.match(hover, /batch 32 \(run\.sh's Hugging Face Trainer command line: micro-batch 4 × /, hover);
  assert.match(hover, /bf16 \(from run\.sh/, hover);
  const cli = await capture(() => planCommand.run([script, '--cluster', 'a100x8', '--json']));
  assert.equal(cli.code, 0, cli.err);
  const report = JSON.parse(cli.out) as PlanReport;
  assert.equal(report.batch, 32);
  // Same batch, same plan: the hover's MFU is the CLI's to the digit it shows.
  const mfu = /MFU (\d+(?:\.\d+)?)%/.exec(hover);
  assert.ok(mfu, hover);
  assert.equal(mfu[1], (report.plan.setup!.mfu * 100).toFixed(1));
});
