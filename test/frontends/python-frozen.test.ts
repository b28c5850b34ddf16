/**
 * Fine-tuning code that freezes parameters (frozenParameters.ts): WAP plans
 * every parameter as trained, so each model of the file carries a warning at
 * the line that freezes, and every plan of it repeats the warning.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { planModel, resolveCluster } from '../../src/planner/index';

before(() => initPythonFrontend());

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

const frozenNotes = async (tail: string) => {
  const r = await analyzeSource(join(__dirname, 'finetune.py'), MODEL + tail, { inputShape: [64] });
  const m = r.models.find((x) => x.name === 'model')!;
  return { m, notes: m.diagnostics.filter((d) => d.code === 'frozen-parameters') };
};

test('a backbone frozen with requires_grad = False: the model says where, and its plan repeats it', async () => {
  const { m, notes } = await frozenNotes('for p in model.backbone.parameters():\n    p.requires_grad = False\n');
  assert.equal(notes.length, 1);
  assert.equal(notes[0].line, 14);
  assert.equal(notes[0].carriesToPlan, true);
  assert.match(notes[0].message, /^This code freezes parameters \(`requires_grad = False`\); WAP plans every parameter as trained/);
  const plan = planModel(m, resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam' });
  assert.ok(plan.diagnostics.some((d) => d.severity === 'warning' && d.message === notes[0].message), plan.diagnostics.map((d) => d.message).join('\n'));
});

test("requires_grad_(False) and PEFT's get_peft_model freeze too; requires_grad = True, torch.no_grad() and eval() do not", async () => {
  assert.match((await frozenNotes('model.backbone.requires_grad_(False)\n')).notes[0]?.message ?? '', /`requires_grad_\(False\)`/);
  const peft = await frozenNotes('from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8, target_modules=["0", "2"]))\n');
  assert.match(peft.notes[0]?.message ?? '', /PEFT \(`get_peft_model`: the base model is frozen, adapters train\)/);
  // The wrapped model is still the one the script builds (trainingWrappers.ts).
  assert.equal(peft.m.totals.params, 64 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10);
  for (const tail of ['for p in model.parameters():\n    p.requires_grad = True\n', 'with torch.no_grad():\n    y = model(torch.randn(2, 64))\n', 'model.eval()\n']) {
    assert.deepEqual((await frozenNotes(tail)).notes, [], tail);
  }
});
