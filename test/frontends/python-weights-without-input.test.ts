/**
 * A layer after one WAP cannot read (an Embedding sized by a tokenizer file, as nanochat's) has no known input, but
 * its weights do not depend on it: Linear(256, 512) holds 131,584 parameters whatever it is fed. Before, every layer
 * after the first unknown one counted 0 (nanochat's upstream base_train.py: 0 of its 560,988,160 parameters; now the
 * 393,216,000 of its 20 blocks, its vocabulary-sized embedding and head still unknown). The model stays incomplete.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

before(async () => {
  await initFrontends();
});

const MODEL = `import torch.nn as nn
from tokenizer import get_vocab_size


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(get_vocab_size(), 256)
        self.fc = nn.Linear(256, 512)
        self.conv = nn.Conv1d(512, 64, kernel_size=3, padding=1)
        self.norm = nn.LayerNorm(64)
        self.out = nn.Linear(64, 256, bias=False)
        self.head = nn.Linear(256, get_vocab_size(), bias=False)

    def forward(self, idx):
        x = self.fc(self.wte(idx))
        x = self.conv(x.transpose(1, 2)).transpose(1, 2)
        return self.head(self.out(self.norm(x)))
`;

test('the layers after an unreadable Embedding keep the weights their own sizes give; the model says it is incomplete', async () => {
  const r = await analyzeSource('net.py', MODEL, {});
  const m = r.models[0]!;
  const params = (name: string) => m.layers.find((l) => l.name === name)?.workload.params;
  assert.equal(params('fc'), 256 * 512 + 512);
  assert.equal(params('conv'), 512 * 64 * 3 + 64);
  assert.equal(params('norm'), 2 * 64);
  assert.equal(params('out'), 64 * 256);
  assert.equal(params('wte'), 0, 'its rows are unknown');
  assert.equal(m.totals.params, 256 * 512 + 512 + 512 * 64 * 3 + 64 + 2 * 64 + 64 * 256);
  assert.equal(m.completeness?.complete, false, 'still incomplete');
  assert.ok(m.completeness!.unshapedLayers >= 5, JSON.stringify(m.completeness));
  assert.equal(m.layers.find((l) => l.name === 'fc')?.workload.forwardFlops, 0, 'what it computes needs its input');
});
