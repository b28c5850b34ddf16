/**
 * A forward's label arguments are read as given (trainingLabels.ts): training
 * passes them, and the loss they unlock is part of the step. The real file is
 * the repository's nanoGPT model (examples/pytorch/gpt.py), whose inference
 * branch runs the LM head on the last position only; the real library is
 * torchvision 0.14's detection models, which raise without targets when
 * training.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { analyzePythonModel, layerNamed } from './pythonModels';

before(() => initPythonFrontend());

const root = join(__dirname, '..', '..');
const PYTHON = '/usr/bin/python3';

test("nanoGPT: forward(idx, targets=None) is read with targets, so the LM head runs on every position and the cross entropy over the vocabulary is planned", async () => {
  const file = join(root, 'examples', 'pytorch', 'gpt.py');
  const r = await analyzeSource(file, readFileSync(file, 'utf8'));
  const m = r.models[0];
  const said = m.diagnostics.map((d) => `${d.code}: ${d.message}`);
  assert.ok(said.some((s) => /^labels-given: GPT\.forward is read with `targets` given/.test(s)), said.join('\n'));
  // The inference branch's `x[:, [-1], :]` is not read any more.
  assert.ok(!said.some((s) => /tensor-index|shape-error/.test(s)), said.join('\n'));
  assert.equal(m.completeness?.complete ?? true, true, JSON.stringify(m.completeness));
  const head = layerNamed(m, 'lm_head');
  assert.deepEqual(head.outputShape, [1024, 50304]);
  // `logits.view(-1, logits.size(-1))` folds the 1,024 positions into the batch; the classes stay the last axis.
  const logProbs = layerNamed(m, 'cross_entropy.log_softmax');
  assert.deepEqual(logProbs.outputShape, [1024, 50304]);
  assert.equal(logProbs.attrs.axis, 2);
  assert.equal(logProbs.inputs[0], layerNamed(m, 'reshape').id);
  assert.equal(layerNamed(m, 'reshape').inputs[0], head.id);
  // Its backward reads the saved log-probabilities: 1,024 × 50,304 fp32 values per sequence (206 MB).
  assert.equal(logProbs.workload.savedActivationBytes, 1024 * 50304 * 4);
  const loss = layerNamed(m, 'cross_entropy');
  assert.deepEqual(loss.outputShape, []);
  // The labels are data: no layer reshapes them, and the parameters are nanoGPT's own count (tied head).
  assert.ok(!m.layers.some((l) => l.inputs.length === 0 && l.op !== 'input' && l.op !== 'parameter'), m.layers.filter((l) => l.inputs.length === 0).map((l) => l.name).join(', '));
  assert.equal(m.totals.params, 124_475_904);
});

test('labels= with a loss module, shifted labels, and names that are not labels', async () => {
  const src = `import torch
import torch.nn as nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 5)
        self.loss_fct = nn.CrossEntropyLoss()
    def forward(self, x, attention_mask=None, labels=None):
        logits = self.fc(x)
        if labels is not None:
            return self.loss_fct(logits.view(-1, 5), labels.view(-1)), logits
        return logits
class CausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.head = nn.Linear(16, 100)
    def forward(self, input_ids, labels=None):
        logits = self.head(self.emb(input_ids))
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        return nn.functional.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, src, tgt=None):
        if tgt is None:
            return self.fc(src)
        return self.fc(src) + self.fc(tgt)
`;
  const cls = analyzePythonModel('labels.py', src, 'Classifier', [32]);
  assert.deepEqual(cls.layers.map((l) => [l.name, l.op, l.outputShape]), [
    ['fc', 'linear', [5]],
    ['reshape', 'reshape', [5]],
    ['loss_fct.log_softmax', 'activation', [5]],
    ['loss_fct', 'reduce', []],
  ]);
  // `attention_mask` is not a label: it keeps its default None.
  assert.match(cls.diagnostics.map((d) => d.message).join('\n'), /Classifier\.forward is read with `labels` given/);

  // The fold needs the sequence length: given, as `--input 12` gives it.
  const lm = (await analyzeSource(join(root, 'labels.py'), src, { inputShape: [12] })).models.find((x) => x.name === 'CausalLM')!;
  const said = lm.diagnostics.map((d) => d.message).join('\n');
  assert.ok(!/tensor-index|cannot reshape/.test(said), said);
  assert.deepEqual(layerNamed(lm, 'cross_entropy.log_softmax').outputShape, [11, 100]);
  assert.equal(layerNamed(lm, 'cross_entropy.log_softmax').attrs.axis, 2);

  // `tgt` is a decoder input, not labels: read with its default, the model is the `tgt is None` branch.
  const s2s = analyzePythonModel('labels.py', src, 'Seq2Seq', [8]);
  assert.deepEqual(s2s.layers.map((l) => l.name), ['fc']);
  assert.ok(!s2s.diagnostics.some((d) => d.code === 'labels-given'));
});

const hasTorchvision = (() => {
  try {
    execFileSync(PYTHON, ['-c', 'import torchvision'], { timeout: 60_000, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

test("torchvision's Faster R-CNN (0.14): training reads forward(images, targets), no more 'targets should not be None' raised", { skip: !hasTorchvision && 'needs torchvision in /usr/bin/python3' }, async () => {
  const lib = '/usr/lib/python3/dist-packages';
  assert.ok(existsSync(join(lib, 'torchvision', 'models', 'detection', 'generalized_rcnn.py')));
  const src = 'from torchvision.models.detection import fasterrcnn_resnet50_fpn\nmodel = fasterrcnn_resnet50_fpn()\n';
  const r = await analyzeSource(join(root, 'det.py'), src, {}, { libraryRoots: [lib], interpreter: PYTHON });
  const m = r.models.find((x) => x.name === 'model');
  assert.ok(m, r.models.map((x) => x.name).join(', '));
  const said = m.diagnostics.map((d) => d.message);
  assert.ok(said.some((s) => /FasterRCNN\.forward is read with `targets` given/.test(s)), said.join('\n'));
  assert.ok(!said.some((s) => /targets should not be None/.test(s)), said.join('\n'));
});
