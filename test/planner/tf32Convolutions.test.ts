/**
 * At fp32 PyTorch runs convolutions on TF32 tensor cores by default (torch.backends.cudnn.allow_tf32 = True) while
 * matmuls stay fp32: an fp32 ResNet-50 on A100s trains at TF32's pace, not at the fp32 peak (pytorch/examples'
 * imagenet at fp32 was planned 1.7× too slow: 65.4 ms against 37.9 ms at tf32). GPUs without TF32 tensor cores
 * and TensorFlow.js models keep fp32; MFU counts each share of the FLOPs against the peak it runs at.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { resnet50 } from './fixtures';

const options = (precision: PlanOptions['precision']): PlanOptions => ({ batch: 256, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', precision, precisionSource: '--precision', gpus: 8 });
const plan = (model: AnalyzedModel, cluster: string, precision: PlanOptions['precision']): PlanReport => {
  const outcome = planModel(model, resolveCluster(cluster, {}), options(precision));
  assert.ok(outcome.feasible);
  return outcome as PlanReport;
};
const tf32Line = (p: PlanReport) => p.diagnostics.find((d) => /TF32 tensor cores/.test(d.message))?.message;

test('fp32 ResNet-50 on A100s: its convolutions at the TF32 rate, within 2% of a TF32 plan, and said', () => {
  const model = resnet50();
  const fp32 = plan(model, 'a100x8', 'fp32');
  const tf32 = plan(model, 'a100x8', 'tf32');
  const ratio = fp32.plan.stepTimeMs / tf32.plan.stepTimeMs;
  assert.ok(ratio >= 1 && ratio < 1.02, `fp32 ${fp32.plan.stepTimeMs} ms against tf32 ${tf32.plan.stepTimeMs} ms`);
  assert.match(tf32Line(fp32) ?? '', /^fp32: the 53 convolutions \(\d+% of the FLOPs\) run on A100-SXM4-80GB's TF32 tensor cores \(PyTorch's default, torch\.backends\.cudnn\.allow_tf32 = True\); matmuls stay fp32/);
  const mfu = fp32.plan.setup!.mfu;
  assert.ok(mfu > 0 && mfu <= 1, `MFU ${mfu}`);
  assert.ok(Math.abs(mfu - tf32.plan.setup!.mfu) / tf32.plan.setup!.mfu < 0.1, `MFU against the peaks the FLOPs run at: ${mfu} against tf32's ${tf32.plan.setup!.mfu}`);
  assert.equal(tf32Line(tf32), undefined, 'a tf32 plan runs everything at TF32: nothing to say');
});

test('a V100 has no TF32 tensor cores: fp32 stays fp32 and nothing is said', () => {
  const fp32 = plan(resnet50(), 'dgx1-v100', 'fp32');
  assert.equal(tf32Line(fp32), undefined);
  const strict = plan({ ...resnet50(), framework: 'tfjs' }, 'dgx1-v100', 'fp32');
  assert.equal(fp32.plan.stepTimeMs, strict.plan.stepTimeMs);
});

test('a TensorFlow.js model states no TF32 default: its fp32 convolutions stay at the fp32 rate on A100s', () => {
  const tfjs = plan({ ...resnet50(), framework: 'tfjs' }, 'a100x8', 'fp32');
  const torch = plan(resnet50(), 'a100x8', 'fp32');
  assert.equal(tf32Line(tfjs), undefined);
  assert.ok(tfjs.plan.stepTimeMs > 1.5 * torch.plan.stepTimeMs, `${tfjs.plan.stepTimeMs} ms against ${torch.plan.stepTimeMs} ms`);
});

test('code that turns cuDNN’s TF32 off keeps its convolutions at fp32, and the plan says where', async () => {
  await initFrontends();
  const script = (off: boolean) => `import torch
import torch.nn as nn
${off ? 'torch.backends.cudnn.allow_tf32 = False\n' : ''}model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(64 * 32 * 32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(8, 3, 32, 32))
`;
  const off = (await analyzeSource('train.py', script(true), {})).models[0]!;
  const on = (await analyzeSource('train.py', script(false), {})).models[0]!;
  assert.equal(off.runPrecision?.convolutionsWithoutTf32, 'train.py:3 (torch.backends.cudnn.allow_tf32 = False)');
  const [strict, fast] = [plan(off, 'a100x8', 'fp32'), plan(on, 'a100x8', 'fp32')];
  assert.match(tf32Line(strict) ?? '', /^fp32: the 2 convolutions stay off A100-SXM4-80GB's TF32 tensor cores: the code turns TF32 off for them \(train\.py:3 \(torch\.backends\.cudnn\.allow_tf32 = False\)\)$/);
  assert.ok(strict.plan.stepTimeMs > 1.5 * fast.plan.stepTimeMs, `${strict.plan.stepTimeMs} ms against ${fast.plan.stepTimeMs} ms`);
});
