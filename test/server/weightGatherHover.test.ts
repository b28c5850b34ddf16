/**
 * The hover says how gradients are synced and, under ZeRO-1/2, when the updated weights are gathered: read through
 * the real server from real files. gpt.py alone plans ZeRO-3 on 8 A100s (gradients reduce-scattered, no step
 * gather); beside an Accelerate FSDP config (SHARD_GRAD_OP, bf16), FSDP's way gathers ZeRO-2's weights behind the
 * next forward, the plan takes ZeRO-2, and the hover and the plan say why.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanRequest } from '../../src/protocol/lsp';
import type { PlanReport } from '../../src/protocol/plan';
import { find, ROOT, TestServer } from './harness';

const FSDP_YAML = `compute_environment: LOCAL_MACHINE
distributed_type: FSDP
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_sharding_strategy: SHARD_GRAD_OP
mixed_precision: bf16
num_machines: 1
num_processes: 8
`;

const servers: TestServer[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of servers) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function hoverOnMlp(folder: string): Promise<{ hover: string; plan: PlanReport }> {
  const server = await TestServer.start({ root: folder, trusted: false, settings: { cluster: 'a100x8', batchSize: 64 } });
  servers.push(server);
  const file = join(folder, 'gpt.py');
  const text = readFileSync(file, 'utf8');
  const uri = await server.open(file, text);
  const { outcome } = await server.conn.sendRequest(PlanRequest, { uri });
  assert.ok(outcome.feasible, JSON.stringify(outcome).slice(0, 300));
  const plan = outcome as PlanReport;
  const at = find(text, 'self.c_fc = nn.Linear');
  return { hover: await server.hoverText(uri, at.line, at.character + 14), plan };
}

test('hover: ZeRO-3 reduce-scatters the gradients and gathers no updated weights; FSDP beside the model gathers ZeRO-2’s in the next forward', async () => {
  const alone = mkdtempSync(join(tmpdir(), 'wap-gather-'));
  dirs.push(alone);
  copyFileSync(join(ROOT, 'examples/pytorch/gpt.py'), join(alone, 'gpt.py'));
  const zero3 = await hoverOnMlp(alone);
  assert.equal(zero3.plan.plan.setup!.zeroStage, 3);
  assert.match(zero3.hover, /gradients reduce-scattered \(ZeRO-3\)/);
  assert.doesNotMatch(zero3.hover, /all-reduced/);
  assert.doesNotMatch(zero3.hover, /updated weights gathered/);

  const withFsdp = mkdtempSync(join(tmpdir(), 'wap-gather-fsdp-'));
  dirs.push(withFsdp);
  copyFileSync(join(ROOT, 'examples/pytorch/gpt.py'), join(withFsdp, 'gpt.py'));
  writeFileSync(join(withFsdp, 'fsdp.yaml'), FSDP_YAML);
  const fsdp = await hoverOnMlp(withFsdp);
  const s = fsdp.plan.plan.setup!;
  assert.equal(s.zeroStage, 2);
  assert.equal(s.weightGather, 'next-forward');
  assert.match(s.weightGatherReason!, /^fsdp\.yaml \(FSDP: SHARD_GRAD_OP gathers/);
  assert.match(fsdp.hover, /gradients reduce-scattered \(ZeRO-2\)/);
  assert.match(fsdp.hover, /ZeRO-2 \(updated weights gathered in the next forward\)/);
});
