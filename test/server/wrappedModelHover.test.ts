/**
 * A transformers model inside the script's own module, through the real server from real files: the tutorials'
 * sentiment classifier (test/fixtures/huggingface/sentiment_classifier.py) beside bert-base-uncased's published
 * config.json. The plan holds BERT's layers under `bert.` and the script's head; the hover on the from_pretrained
 * line speaks for BERT's layers, on the head for the head; and wap.framework reaches the planner (DDP: ZeRO ≤ 1).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanRequest } from '../../src/protocol/lsp';
import type { PlanReport } from '../../src/protocol/plan';
import { find, ROOT, TestServer } from './harness';

const servers: TestServer[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of servers) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('the wrapped BERT classifier plans with its encoder, the hover names both parts, and wap.framework ddp keeps ZeRO ≤ 1', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'wap-wrapped-'));
  dirs.push(folder);
  const fixtures = join(ROOT, 'test/fixtures/huggingface');
  copyFileSync(join(fixtures, 'sentiment_classifier.py'), join(folder, 'sentiment_classifier.py'));
  mkdirSync(join(folder, 'bert-base-uncased'));
  copyFileSync(join(fixtures, 'bert-base-uncased/config.json'), join(folder, 'bert-base-uncased/config.json'));
  const server = await TestServer.start({ root: folder, trusted: false, settings: { cluster: 'a100x8', batchSize: 64, framework: 'ddp' } });
  servers.push(server);
  const file = join(folder, 'sentiment_classifier.py');
  const text = readFileSync(file, 'utf8');
  const uri = await server.open(file, text);
  const { outcome } = await server.conn.sendRequest(PlanRequest, { uri });
  assert.ok(outcome.feasible, JSON.stringify(outcome).slice(0, 300));
  const plan = outcome as PlanReport;
  const names = plan.plan.layers.map((l) => l.name);
  assert.ok(names.includes('bert.encoder.layer.11.output.dense') && names.includes('out'), names.slice(0, 5).join(', '));
  // Left to itself the search shards this model to ZeRO-3 on 8 A100s; DDP runs ZeRO-1 at most, ZeroRedundancyOptimizer's way.
  assert.equal(plan.plan.setup!.zeroStage, 1);
  assert.match(plan.plan.setup!.weightGatherReason!, /^the wap\.framework setting \(PyTorch DDP: ZeRO-1 is ZeroRedundancyOptimizer/);

  const bert = find(text, 'BertModel.from_pretrained');
  const bertHover = await server.hoverText(uri, bert.line, bert.character + 3);
  assert.match(bertHover, /bert\./);
  const head = find(text, 'self.out = nn.Linear');
  const headHover = await server.hoverText(uri, head.line, head.character + 6);
  assert.match(headHover, /\bout\b/);
  assert.doesNotMatch(headHover, /bert\.encoder/);
});
