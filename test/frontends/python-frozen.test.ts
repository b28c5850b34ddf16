/**
 * Fine-tuning code that freezes parameters (frontends/python/frozenParameters.ts,
 * core/frozenParameters.ts), against torch itself: the fixtures under
 * test/fixtures/finetune freeze parts of torchvision's real ResNet-50, and
 * frozen_truth.py runs them in /usr/bin/python3 (Debian's torch 1.13) to count
 * the parameters that train and the bytes autograd saves per sample. WAP reads
 * the same scripts without running them and must agree: exactly on the
 * counts, within 2% on saved bytes (what WAP leaves out is BatchNorm's
 * per-channel statistics, per batch rather than per sample).
 *
 * Freezes decided by parameter name (named_conditions.py: if/elif/else and
 * `continue` on `name`) are read per parameter; one that splits a layer
 * (bitfit.py: BatchNorm shifts train, scales do not) plans the layer trained
 * and says so. A freeze WAP cannot attribute to a module stays a warning that
 * every plan repeats. Hugging Face models' freezes are
 * test/frontends/python-hf-freeze.test.ts's; LoRA's adapters are
 * test/frontends/python-lora.test.ts's.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzeSource, initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOutcome, PlanReport } from '../../src/protocol/plan';

const PYTHON = '/usr/bin/python3';
const fixtures = join(__dirname, '..', 'fixtures', 'finetune');
/** Scripts whose saved activations WAP must match too; TRUTH_ONLY ones are compared on their counts in their own tests. */
const SCRIPTS = ['head_only.py', 'last_stages.py', 'named_conditions.py', 'vit_frozen_attention.py'];
const TRUTH_ONLY = ['vit_head_only.py', 'bitfit.py'];

interface Truth {
  trainable: number;
  frozen: number;
  savedPerSample: number;
}
let truth: Record<string, Truth> = {};
let torchvisionDir = '';

before(async () => {
  await initFrontends();
  try {
    const out = execFileSync(PYTHON, [join(fixtures, 'frozen_truth.py'), '2', ...[...SCRIPTS, ...TRUTH_ONLY].map((s) => join(fixtures, s))], { encoding: 'utf8', timeout: 10 * 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    const parsed = JSON.parse(out) as { scripts: Record<string, Truth> };
    truth = Object.fromEntries(Object.entries(parsed.scripts).map(([path, t]) => [path.split('/').pop()!, t]));
    torchvisionDir = execFileSync(PYTHON, ['-c', 'import os, torchvision; print(os.path.dirname(torchvision.__file__))'], { encoding: 'utf8', timeout: 60_000 }).trim();
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr ?? String(e);
    throw new Error(`This test needs torch and torchvision in ${PYTHON} (Debian: apt-get install python3-torch python3-torchvision; .ci/run installs them). It failed with: ${stderr.trim().split('\n').pop()}`);
  }
});

function feasible(out: PlanOutcome): PlanReport {
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return out;
}

function readFixture(script: string): { model: AnalyzedModel; codes: string[] } {
  const file = join(fixtures, script);
  const result = parseSource(file, readFileSync(file, 'utf8'), { libraryRoots: [dirname(torchvisionDir)] });
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, `WAP reads \`model\` from ${script}`);
  const model = analyzeModel(spec, { inputShape: [3, 224, 224] });
  return { model, codes: [...(result?.diagnostics ?? []), ...model.diagnostics].map((d) => d.code ?? '') };
}

for (const script of SCRIPTS) {
  test(`${script}: trainable and frozen parameters are torch's, and so are the saved activations per sample`, () => {
    const t = truth[script];
    assert.ok(t, `torch measured ${script}`);
    const { model, codes } = readFixture(script);
    assert.equal(model.totals.params, t.trainable);
    assert.equal(model.totals.frozenParams, t.frozen);
    assert.ok(!codes.includes('frozen-parameters'), 'every freeze in the script is attributed to its module');
    const saved = model.layers.reduce((a, l) => a + l.workload.savedActivationBytes, 0);
    const ratio = saved / t.savedPerSample;
    console.log(`${script}: WAP ${(saved / 1e6).toFixed(3)} MB/sample saved, torch ${(t.savedPerSample / 1e6).toFixed(3)} MB/sample, ratio ${ratio.toFixed(4)}`);
    assert.ok(Math.abs(ratio - 1) <= 0.02, `saved bytes per sample: WAP ${saved}, torch ${t.savedPerSample}`);
  });
}

test('vit_frozen_attention.py: a frozen nn.MultiheadAttention between trained layers runs its input gradient only and keeps no projection input', () => {
  const { model } = readFixture('vit_frozen_attention.py');
  const attention = model.layers.filter((l) => l.op === 'mha');
  assert.equal(attention.length, 12);
  for (const a of attention) {
    assert.equal(a.workload.backward, 'input-gradient', a.name);
    // ViT-B/16: 197 tokens, 768 features, 12 heads. The four projections' weight gradients (2·197·768·768 each, and
    // the bias sums) are what a trained one adds to the backward; the core's backward and the input gradients stay.
    const projections = 4 * (2 * 197 * 768 * 768 + 197 * 768);
    assert.equal(a.workload.backwardFlops, 2 * a.workload.forwardFlops - projections, a.name);
  }
});

test("vit_head_only.py: ViT-B/16's class token and position embedding (nn.Parameters, not layers) freeze with the encoder, so nothing before the new head runs a backward", () => {
  const t = truth['vit_head_only.py'];
  const { model, codes } = readFixture('vit_head_only.py');
  assert.deepEqual([model.totals.params, model.totals.frozenParams], [t.trainable, t.frozen]);
  assert.ok(!codes.includes('frozen-parameters'), codes.join(' '));
  const trained = model.layers.filter((l) => l.workload.backwardFlops > 0).map((l) => l.name);
  assert.deepEqual(trained, ['heads.head']);
  // What the head saves: WAP its 768-float input, torch the [197, 768] storage that input is a view of (x[:, 0]).
  assert.equal(model.layers.reduce((a, l) => a + l.workload.savedActivationBytes, 0), 768 * 4);
  assert.equal(t.savedPerSample, 197 * 768 * 4);
});

test('bitfit.py: layers whose biases train and weights do not are planned trained, with a warning; the frozen convolutions are torch\'s', () => {
  const t = truth['bitfit.py'];
  const { model } = readFixture('bitfit.py');
  // torch freezes the 53 BatchNorm scales (26,560) and the fc weight (2048 × 100) too; WAP keeps those 54 layers trained.
  const split = 26_560 + 2048 * 100;
  assert.deepEqual([model.totals.params, model.totals.frozenParams], [t.trainable + split, t.frozen - split]);
  const warning = model.diagnostics.find((d) => d.code === 'frozen-parameters');
  assert.match(warning?.message ?? '', /^This code freezes part of 54 layers \(e\.g\. `bn1\.weight` frozen, `bn1\.bias` trained\); WAP plans a layer frozen or trained as a whole, so they are planned as trained/);
  assert.equal(warning?.carriesToPlan, true);
});

test("nanoGPT's last block by name: its own LayerNorm's nn.Parameters (F.layer_norm) and the tied embedding follow torch's names", () => {
  const dir = join(__dirname, '..', 'fixtures', 'nanogpt');
  const file = join(dir, 'finetune_last_block.py');
  const count = 'import runpy, sys, json; sys.path.insert(0, "."); m = runpy.run_path("finetune_last_block.py")["model"]; ps = list(m.parameters()); print(json.dumps([sum(p.numel() for p in ps if p.requires_grad), sum(p.numel() for p in ps if not p.requires_grad)]))';
  const [trainable, frozen] = JSON.parse(execFileSync(PYTHON, ['-c', count], { cwd: dir, encoding: 'utf8', timeout: 120_000 })) as [number, number];
  const result = parseSource(file, readFileSync(file, 'utf8'), { workspaceFolders: [dir] });
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec);
  const model = analyzeModel(spec, {});
  assert.deepEqual([model.totals.params, model.totals.frozenParams], [trainable, frozen]);
  // The blocks before the last are frozen through: their LayerNorms (nn.Parameters through F.layer_norm) too.
  assert.ok(model.layers.filter((l) => l.op === 'layernorm' && l.name.startsWith('transformer.h.0')).every((l) => l.workload.params === 0 && l.workload.frozenParams! > 0));
});

test('head_only.py plans a forward-only backbone: weights without gradients or optimizer state, and a faster step than full training', () => {
  const { model } = readFixture('head_only.py');
  const cluster = resolveCluster('a100x8');
  const options = { batch: 256, objective: 'throughput' as const, strategies: 'dp' as const, optimizer: 'adam' as const, precision: 'bf16' as const };
  const plan = feasible(planModel(model, cluster, options));
  assert.ok(plan.diagnostics.some((d) => /^frozen parameters: 23\.51 M of 23\.53 M do not train/.test(d.message)), plan.diagnostics.map((d) => d.message).join('\n'));
  const memory = plan.plan.setup!.memoryPerGpu;
  assert.ok(memory.optimizer < 1e6 && memory.gradients < 1e6, `only the 20,490-parameter head has gradients and Adam state: ${JSON.stringify(memory)}`);
  // Frozen weights at the setup's weight dtype (bf16 with fp32 masters held by the optimizer: 2 bytes), not 16 bytes each.
  assert.ok(Math.abs(memory.weights - (23_508_032 * 2 + 20_490 * 2 + 53_120 * 2)) < 1e6, `weights ${memory.weights}`);
  const fullTraining = feasible(planModel(readFixture('last_stages.py').model, cluster, options));
  assert.ok(plan.plan.stepTimeMs < fullTraining.plan.stepTimeMs, `frozen backbone ${plan.plan.stepTimeMs} ms vs last stage trained ${fullTraining.plan.stepTimeMs} ms`);
});

const MODEL = `import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256))
        self.head = nn.Linear(256, 10)
    def forward(self, x):
        return self.head(self.backbone(x))

model = Net()
`;

const read = async (tail: string) => {
  const r = await analyzeSource(join(__dirname, 'finetune.py'), MODEL + tail, { inputShape: [64] });
  const m = r.models.find((x) => x.name === 'model')!;
  return { m, warnings: m.diagnostics.filter((d) => d.code === 'frozen-parameters' || d.code === 'peft-adapters') };
};

test('each way of freezing the backbone is modelled; a head replaced after freezing everything trains', async () => {
  const backbone = 64 * 256 + 256 + 256 * 256 + 256;
  for (const tail of [
    'for p in model.backbone.parameters():\n    p.requires_grad = False\n',
    'for name, p in model.backbone.named_parameters():\n    p.requires_grad_(False)\n',
    'model.backbone.requires_grad_(False)\n',
    'model.backbone.requires_grad_(requires_grad=False)\n',
    'model.requires_grad_(False)\nmodel.head = nn.Linear(256, 10)\n',
  ]) {
    const { m, warnings } = await read(tail);
    assert.deepEqual([m.totals.params, m.totals.frozenParams, warnings], [256 * 10 + 10, backbone, []], tail);
  }
  // Frozen, then unfrozen: trained.
  const thawed = await read('model.requires_grad_(False)\nmodel.requires_grad_(True)\n');
  assert.deepEqual([thawed.m.totals.frozenParams, thawed.warnings], [undefined, []]);
});

test('freezes decided by name: conditions on the name, any(), elif/else and a thaw after a freeze, in program order', async () => {
  const backbone = 64 * 256 + 256 + 256 * 256 + 256;
  const head = 256 * 10 + 10;
  for (const [tail, frozen] of [
    ['for name, p in model.named_parameters():\n    if not name.startswith("head"):\n        p.requires_grad = False\n', backbone],
    ['for n, p in model.named_parameters():\n    p.requires_grad = any(k in n for k in ["head", "backbone.2"])\n', 64 * 256 + 256],
    ['for n, p in model.named_parameters():\n    if "head" in n:\n        pass\n    elif n == "backbone.0.bias":\n        print(n)\n        continue\n    else:\n        p.requires_grad_(False)\n', null],
    ['model.requires_grad_(False)\nfor name, param in model.named_parameters():\n    if name.startswith(("head", "backbone.2")):\n        param.requires_grad = True\n', 64 * 256 + 256],
    ['for name, p in model.backbone.named_parameters():\n    if name.startswith("0"):\n        p.requires_grad = False\n', 64 * 256 + 256],
  ] as Array<[string, number | null]>) {
    const { m, warnings } = await read(tail);
    if (frozen === null) {
      // backbone.0's weight frozen and its bias not: the layer is planned trained, and the plan says why.
      assert.deepEqual([m.totals.frozenParams, warnings.length], [256 * 256 + 256, 1], tail);
      assert.match(warnings[0].message, /part of 1 layer \(e\.g\. `backbone\.0\.weight` frozen, `backbone\.0\.bias` trained\)/);
      continue;
    }
    assert.deepEqual([m.totals.params, m.totals.frozenParams, warnings], [backbone + head - frozen, frozen, []], tail);
  }
});

test("one parameter's requires_grad: a layer with no other parameter freezes whole, a weight frozen beside a trained bias is said", async () => {
  // backbone.2's weight then its bias: the layer ends frozen whole, with nothing said.
  const both = await read('model.backbone[2].weight.requires_grad = False\nmodel.backbone[2].bias.requires_grad_(False)\n');
  assert.deepEqual([both.m.totals.frozenParams, both.warnings], [256 * 256 + 256, []]);
  const weightOnly = await read('model.backbone[0].weight.requires_grad = False\n');
  assert.equal(weightOnly.m.totals.frozenParams, undefined);
  assert.equal(weightOnly.warnings.length, 1);
  assert.match(weightOnly.warnings[0].message, /^This code freezes part of 1 layer \(e\.g\. `model\.backbone\[0\]\.weight` frozen, `model\.backbone\[0\]\.bias` trained\)/);
});

test('a freeze WAP cannot attribute stays a warning that the plan repeats; torch.no_grad() and eval() freeze nothing', async () => {
  // A condition on the parameter itself (its size) cannot be computed without running the code.
  const { m, warnings } = await read('for name, p in model.named_parameters():\n    if p.numel() > 1000:\n        p.requires_grad = False\n');
  assert.equal(m.totals.frozenParams, undefined);
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0].line, 13);
  assert.match(warnings[0].message, /^WAP cannot decide whether this code freezes `backbone\.0\.weight` \(the condition depends on something it cannot compute\); 3 layers keep the state they had before this code/);
  // A loop over something WAP cannot compute: the freeze in it is not attributed.
  const lost = await read('for p in make_backbone().parameters():\n    p.requires_grad = False\n');
  assert.equal(lost.warnings.length, 1);
  assert.match(lost.warnings[0].message, /^This code freezes parameters \(`requires_grad = False`\) that WAP cannot attribute to a module; it plans them as trained/);
  for (const w of [warnings[0], lost.warnings[0]]) {
    const plan = planModel((w === warnings[0] ? m : lost.m), resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam' });
    assert.ok(plan.diagnostics.some((d) => d.severity === 'warning' && d.message === w.message), plan.diagnostics.map((d) => d.message).join('\n'));
  }
  for (const tail of ['with torch.no_grad():\n    y = model(torch.randn(2, 64))\n', 'model.eval()\n']) {
    const r = await read(tail);
    assert.deepEqual([r.m.totals.frozenParams, r.warnings], [undefined, []], tail);
  }
});

test("PEFT's get_peft_model freezes the base model and trains LoRA's adapters on the targeted Linears", async () => {
  const { m, warnings } = await read('from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8, target_modules=["0", "2"]))\n');
  assert.equal(m.totals.params, 8 * (64 + 256) + 8 * (256 + 256));
  assert.equal(m.totals.frozenParams, 64 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10);
  assert.deepEqual(warnings, []);
});
