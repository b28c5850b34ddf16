/**
 * Which files beside a model speak for it (configs/trainingHints.ts): its own
 * file, the configs in its folder, and the Python files that import it. A
 * sibling script that imports nothing of it trains a model of its own, so its
 * bf16, optimizer and gradient checkpointing are not this model's.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initConfigReaders, withTrainingHintsFrom } from '../../src/configs';
import type { PlanOptions } from '../../src/protocol/planOptions';

before(() => initConfigReaders());

const base: PlanOptions = { batch: 8, objective: 'throughput', strategies: 'all', optimizer: 'momentum', optimizerAssumed: true };
const sibling = {
  name: 'finetune_other.py',
  text: 'import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\nmodel = AutoModelForCausalLM.from_pretrained("./other", torch_dtype=torch.bfloat16)\nargs = TrainingArguments("out", bf16=True, gradient_checkpointing=True, optim="adamw_8bit")\n',
};

test("a sibling training script that does not import the model says nothing about it; one that imports it (train.py's `from model import GPT`) does", () => {
  const model = { name: 'model.py', text: 'import torch.nn as nn\nclass GPT(nn.Module):\n    pass\n' };
  const alone = withTrainingHintsFrom(base, [model, sibling], 'model.py');
  assert.deepEqual([alone.precision, alone.pins?.recompute, alone.optimizerSource], [undefined, undefined, undefined]);
  const importing = { ...sibling, name: 'train.py', text: `from model import GPT\n${sibling.text}` };
  const hinted = withTrainingHintsFrom(base, [model, importing], 'model.py');
  assert.deepEqual([hinted.precision, hinted.ampStyle, hinted.pins?.recompute, hinted.optimizer], ['bf16', 'pure', 'full', 'adam8bit']);
  // Package-relative imports count too (`from .model import GPT`, `from pkg.model import GPT`).
  const relative = { ...importing, text: importing.text.replace('from model import GPT', 'from .model import GPT') };
  assert.equal(withTrainingHintsFrom(base, [model, relative], 'model.py').precision, 'bf16');
});

test("a training config file in the folder still speaks for the model; the model's own script is read first", () => {
  const script = { name: 'sft.py', text: 'from transformers import TrainingArguments\nargs = TrainingArguments("out", fp16=True)\n' };
  const ds = { name: 'ds_config.json', text: '{"bf16": {"enabled": true}, "optimizer": {"type": "Lion"}}' };
  const hinted = withTrainingHintsFrom(base, [script, sibling, ds], 'sft.py');
  assert.deepEqual([hinted.precision, hinted.optimizer, hinted.pins?.recompute], ['fp16', 'momentum', undefined]);
});
