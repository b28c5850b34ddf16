/**
 * The conv memory format read from the code beside a model (memoryFormatHint.ts):
 * a conversion that always runs makes the plan price channels_last, one behind a
 * flag does not, and torch's own files, which only test or document the layout,
 * say nothing. The planner's line says which layout it priced and where it came from.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initConfigReaders } from '../../src/configs';
import { memoryFormatHint, withMemoryFormatFrom } from '../../src/configs/memoryFormatHint';
import { withTrainingHintsFrom } from '../../src/configs/trainingHints';
import { analyzeSource } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOptions } from '../../src/protocol/planOptions';

before(async () => {
  await initConfigReaders();
  await initPythonFrontend();
});

const root = join(__dirname, '..', '..');
const train = (body: string) => ({ name: 'train.py', text: `import torch\nfrom resnet import resnet50\n${body}` });

test('an unconditional .to(memory_format=torch.channels_last) is a hint, also under the script guard; one behind a flag is not', () => {
  assert.deepEqual(memoryFormatHint([train('model = resnet50().cuda()\nmodel = model.to(memory_format=torch.channels_last)\n')], 'resnet.py'), {
    memoryFormat: 'channels_last', source: 'train.py:4 (model.to(memory_format=torch.channels_last))',
  });
  const guarded = train('def main():\n    model = resnet50()\n    model.to(memory_format=torch.channels_last)\n\nif __name__ == "__main__":\n    main()\n');
  assert.equal(memoryFormatHint([guarded])?.source, 'train.py:5 (model.to(memory_format=torch.channels_last))');
  const underMain = train('if __name__ == "__main__":\n    images = images.contiguous(memory_format=torch.channels_last)\n');
  assert.equal(memoryFormatHint([underMain])?.memoryFormat, 'channels_last');
  // torchvision's and timm's reference scripts convert behind --channels-last: the user's choice per run.
  assert.equal(memoryFormatHint([train('if args.channels_last:\n    model = model.to(memory_format=torch.channels_last)\n')]), undefined);
  assert.equal(memoryFormatHint([train('fmt = torch.channels_last if args.nhwc else torch.contiguous_format\nmodel = model.to(memory_format=fmt)\n')]), undefined);
  // A flag or setting wins over the code.
  const explicit: PlanOptions = { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', memoryFormat: 'channels_first', memoryFormatSource: '--memory-format' };
  assert.equal(withMemoryFormatFrom(explicit, { memoryFormat: 'channels_last', source: 'train.py:4' }).memoryFormat, 'channels_first');
});

test("torch 1.13's own files that test or document channels_last give no hint", { skip: !existsSync('/usr/lib/python3/dist-packages/torch/nn/modules/_functions.py') && 'needs python3-torch' }, () => {
  const lib = '/usr/lib/python3/dist-packages/torch/nn';
  for (const file of ['modules/_functions.py', 'modules/module.py', 'utils/memory_format.py']) {
    const text = readFileSync(join(lib, file), 'utf8');
    assert.ok(text.includes('memory_format=torch.channels_last'), file);
    assert.equal(memoryFormatHint([{ name: file, text }]), undefined, file);
  }
});

test('ResNet-50 in bf16 on 8 A100: the code beside it converts to channels_last, so no layout transposes are priced, and the plan says where that came from', async () => {
  const file = join(root, 'examples', 'pytorch', 'resnet.py');
  const model = (await analyzeSource(file, readFileSync(file, 'utf8'))).models.find((m) => m.name === 'resnet50')!;
  const base: PlanOptions = { batch: 2048, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', precision: 'bf16', precisionSource: 'test', gpus: 8, maxGpus: 8 };
  const hinted = withTrainingHintsFrom(base, [{ name: 'resnet.py', text: readFileSync(file, 'utf8') }, train('model = resnet50().to(memory_format=torch.channels_last)\n')], 'resnet.py');
  assert.equal(hinted.memoryFormat, 'channels_last');
  const nchw = planModel(model, resolveCluster('a100x8'), base);
  const nhwc = planModel(model, resolveCluster('a100x8'), hinted);
  assert.ok(nchw.feasible && nhwc.feasible);
  const line = (o: typeof nchw) => o.diagnostics.find((d) => d.message.startsWith('memory format:'))?.message;
  assert.match(line(nchw)!, /^memory format: channels_first \(NCHW, PyTorch's default; .*\): each bf16 convolution is priced with its NCHW↔NHWC transposes$/);
  assert.equal(line(nhwc), 'memory format: channels_last (NHWC), from train.py:3 (resnet50().to(memory_format=torch.channels_last)): convolutions pay no layout transposes');
  // The transposes read and write every conv input and output twice more: NHWC is faster, by a bounded amount.
  const speedup = nchw.plan.stepTimeMs / nhwc.plan.stepTimeMs;
  assert.ok(speedup > 1.05 && speedup < 2, `NCHW ${nchw.plan.stepTimeMs.toFixed(1)} ms vs NHWC ${nhwc.plan.stepTimeMs.toFixed(1)} ms`);
});
