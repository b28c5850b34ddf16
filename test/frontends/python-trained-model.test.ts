/**
 * Which model a training script trains, read without running it, on files in the upstream layouts a user trial ran
 * (test/fixtures/pytorch-examples, test/fixtures/mingpt); torch 1.13 at /usr/bin/python3 counts the parameters.
 *
 * - pytorch/examples' FSDP2 example shards every block with fully_shard before the model: WAP took the first block as
 *   the model (800 parameters); a module inside another trained one is a part of it.
 * - the DDP tutorial trains one `torch.nn.Linear(20, 1)` through its own Trainer: "no model found".
 * - minGPT's chargpt builds GPT in its __main__ part and hands it to minGPT's Trainer, whose optimizer comes from
 *   `configure_optimizers` sorting `named_parameters()` into groups: "no model found". Its size comes from a
 *   model_type merged into the config's `__dict__`, which WAP did not model (zero blocks, silently).
 * - mingpt/model.py alone planned NewGELU, an activation, without saying GPT was skipped.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalysisResult, AnalyzeOptions, Diagnostic } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

const PYTHON = '/usr/bin/python3';
const FIXTURES = join(__dirname, '..', 'fixtures');
const FSDP2 = join(FIXTURES, 'pytorch-examples', 'distributed', 'FSDP2');
const DDP_TUTORIAL = join(FIXTURES, 'pytorch-examples', 'distributed', 'ddp-tutorial-series');
const MINGPT = join(FIXTURES, 'mingpt');
const CHARGPT = join(MINGPT, 'projects', 'chargpt', 'chargpt.py');

before(async () => {
  await initFrontends();
});

/** Torch's parameter count of what `build` (Python source ending in an expression statement `model = …`) builds. */
function torchParams(path: string, build: string): number {
  const code = `import sys\nsys.path.insert(0, ${JSON.stringify(path)})\n${build}\nprint(sum(p.numel() for p in model.parameters()))`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${PYTHON} needs torch (CI installs it): ${r.stderr}`);
  return Number(r.stdout.trim().split('\n').pop());
}

const analyze = (file: string, workspace: string, options: AnalyzeOptions = {}, text = readFileSync(file, 'utf8')): Promise<AnalysisResult> =>
  analyzeSource(file, text, options, { workspaceFolders: [workspace] });

const allDiagnostics = (r: AnalysisResult): Diagnostic[] => [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics ?? [])];
const messages = (r: AnalysisResult): string => JSON.stringify(allDiagnostics(r).map((d) => d.message));

test('FSDP2 shards each block before the model: the model is the Transformer that holds them, at torch’s count', async () => {
  const r = await analyze(join(FSDP2, 'example.py'), FSDP2);
  assert.deepEqual(r.models.map((m) => m.name), ['Transformer'], messages(r));
  const truth = torchParams(FSDP2, 'from model import ModelArgs, Transformer\nmodel = Transformer(ModelArgs(n_layers=10, n_heads=4, vocab_size=1024, max_seq_len=64, dropout_p=0))');
  assert.equal(r.models[0]!.totals.params, truth);
  assert.equal(truth, 65_984);
});

test('the DDP tutorial trains one nn.Linear through its own Trainer: that layer is the model, at torch’s count', async () => {
  const r = await analyze(join(DDP_TUTORIAL, 'multigpu_torchrun.py'), DDP_TUTORIAL, { scriptArguments: { words: ['50', '10'], source: '--script-args' } });
  assert.deepEqual(r.models.map((m) => m.name), ['Linear'], messages(r));
  assert.equal(r.models[0]!.totals.params, torchParams(DDP_TUTORIAL, 'import torch\nmodel = torch.nn.Linear(20, 1)'));
});

/** minGPT's GPT as chargpt builds it: the model_type given, the vocabulary of input.txt, block_size 128. */
const chargptTruth = (modelType: string): number =>
  torchParams(
    MINGPT,
    `from mingpt.model import GPT\nc = GPT.get_default_config()\nc.model_type = ${JSON.stringify(modelType)}\nc.vocab_size = len(set(open(${JSON.stringify(join(MINGPT, 'projects', 'chargpt', 'input.txt'))}).read()))\nc.block_size = 128\nmodel = GPT(c)`,
  );

test('minGPT’s chargpt: the GPT its __main__ part hands to minGPT’s Trainer is the model; gpt-mini merged through __dict__', async () => {
  const r = await analyze(CHARGPT, MINGPT);
  assert.deepEqual(r.models.map((m) => m.name), ['GPT'], messages(r));
  const gpt = r.models[0]!;
  assert.equal(gpt.totals.params, chargptTruth('gpt-mini'));
  // gpt-mini's six blocks, each with its attention and MLP: merge_from_dict filled n_layer in.
  assert.equal(gpt.layers.filter((l) => /^transformer\.h\.\d+\.attn\.c_attn$/.test(l.id)).length, 6);
  assert.ok(!allDiagnostics(r).some((d) => d.severity === 'warning'), messages(r));
  // Seen trained: the optimizer configure_optimizers builds from its named parameters is tied to it.
  assert.ok(!allDiagnostics(r).some((d) => d.code === 'main-model-untrained'), messages(r));
});

test('minGPT’s chargpt with `--model.model_type=gpt-nano`: merge_from_args sets it, and the GPT trained is gpt-nano', async () => {
  const r = await analyze(CHARGPT, MINGPT, { scriptArguments: { words: ['--model.model_type=gpt-nano'], source: '--script-args' } });
  assert.equal(r.models[0]?.totals.params, chargptTruth('gpt-nano'), messages(r));
});

test('mingpt/model.py alone: the classes that need a config are named with why, GPT’s own default config included', async () => {
  const file = join(MINGPT, 'mingpt', 'model.py');
  const r = await analyze(file, MINGPT);
  // NewGELU builds with its defaults; what is planned is said not to be the file's model.
  assert.deepEqual(r.models.map((m) => m.name), ['NewGELU']);
  const note = r.models[0]!.diagnostics?.find((d) => d.code === 'model-classes-skipped');
  assert.ok(note?.carriesToPlan, messages(r));
  assert.match(note.message, /GPT \(its constructor needs `config`, and GPT\.get_default_config\(\) leaves n_layer, n_head, n_embd, vocab_size, block_size unset/);
  assert.match(note.message, /CausalSelfAttention \(its constructor needs `config`\); Block \(its constructor needs `config`\)/);
});

test('a class whose own get_default_config() sets every size is read with it, and says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-default-config-'));
  const file = join(dir, 'mlp.py');
  const text = [
    'import torch.nn as nn',
    '',
    'class Settings:',
    '    def __init__(self, **kwargs):',
    '        self.__dict__.update(kwargs)',
    '',
    'class MLP(nn.Module):',
    '    @staticmethod',
    '    def get_default_config():',
    '        return Settings(width=96, depth=3, classes=10)',
    '',
    '    def __init__(self, config):',
    '        super().__init__()',
    '        self.body = nn.Sequential(*[nn.Linear(config.width, config.width) for _ in range(config.depth)])',
    '        self.head = nn.Linear(config.width, config.classes)',
    '',
    '    def forward(self, x):',
    '        return self.head(self.body(x))',
    '',
  ].join('\n');
  writeFileSync(file, text);
  const r = await analyze(file, dir, {}, text);
  assert.deepEqual(r.models.map((m) => m.name), ['MLP'], messages(r));
  assert.equal(r.models[0]!.totals.params, torchParams(dir, 'from mlp import MLP\nmodel = MLP(MLP.get_default_config())'));
  assert.match(r.models[0]!.diagnostics!.find((d) => d.code === 'class-default-config')!.message, /^MLP needs `config`, which nothing in this file gives: it is read with MLP\.get_default_config\(\)/);
});

test('blocks counted by a size left None are said missing, not silently zero', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-range-none-'));
  const file = join(dir, 'net.py');
  const text = [
    'import torch.nn as nn',
    '',
    'class Net(nn.Module):',
    '    def __init__(self, n_layer=None):',
    '        super().__init__()',
    '        self.inp = nn.Linear(8, 8)',
    '        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(n_layer)])',
    '',
    '    def forward(self, x):',
    '        x = self.inp(x)',
    '        for b in self.blocks:',
    '            x = b(x)',
    '        return x',
    '',
  ].join('\n');
  const r = await analyze(file, dir, {}, text);
  const said = allDiagnostics(r).find((d) => d.code === 'unknown-module-name');
  assert.ok(said, messages(r));
  assert.match(said.message, /registers modules the evaluator could not list \(range\(\) of None, which Python refuses \(TypeError\)/);
  // The blocks are missing: the model says it is incomplete, with this as its reason.
  const model = (r as { models: Array<{ completeness?: { complete: boolean; reasons: string[] } }> }).models[0];
  assert.equal(model?.completeness?.complete, false);
  assert.ok(model?.completeness?.reasons.includes(said.message), JSON.stringify(model?.completeness));
});

test('a model the __main__ part builds without WAP seeing it trained is read, with a note saying so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-main-built-'));
  const file = join(dir, 'net.py');
  const text = [
    'import torch.nn as nn',
    '',
    'class Net(nn.Module):',
    '    def __init__(self, width):',
    '        super().__init__()',
    '        self.fc = nn.Linear(width, 10)',
    '',
    '    def forward(self, x):',
    '        return self.fc(x)',
    '',
    'if __name__ == "__main__":',
    '    model = Net(32)',
    '    print(model)',
    '',
  ].join('\n');
  const r = await analyze(file, dir, {}, text);
  assert.deepEqual(r.models.map((m) => [m.name, m.totals.params]), [['Net', 32 * 10 + 10]], messages(r));
  assert.match(r.models[0]!.diagnostics!.find((d) => d.code === 'main-model-untrained')!.message, /^Net is read as the model `model` the `__main__` part builds; WAP did not see it trained/);
});

test('an optimizer over a head (`SGD(model.fc.parameters())`, or through `head = model.fc`) trains the model the head was read from, not a model of one Linear', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-linear-probe-'));
  const file = join(dir, 'probe.py');
  const text = (optimizer: string) =>
    [
      'import torch',
      'import torch.nn as nn',
      '',
      'class Net(nn.Module):',
      '    def __init__(self, classes):',
      '        super().__init__()',
      '        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.ReLU())',
      '        self.fc = nn.Linear(64, classes)',
      '',
      '    def forward(self, x):',
      '        return self.fc(self.backbone(x))',
      '',
      'def main():',
      '    model = Net(10)',
      optimizer,
      '',
      'if __name__ == "__main__":',
      '    main()',
      '',
    ].join('\n');
  const probe = await analyze(file, dir, {}, text('    opt = torch.optim.SGD(model.fc.parameters(), lr=0.1)'));
  assert.deepEqual(probe.models.map((m) => [m.name, m.totals.params]), [['Net', 32 * 64 + 64 + 64 * 10 + 10]], messages(probe));
  // A name bound to that very read (`head = model.fc`) is the same head of the same model.
  const aliased = await analyze(file, dir, {}, text('    head = model.fc\n    opt = torch.optim.SGD(head.parameters(), lr=0.1)'));
  assert.deepEqual(aliased.models.map((m) => [m.name, m.totals.params]), [['Net', 32 * 64 + 64 + 64 * 10 + 10]], messages(aliased));
  // The head handed on to code that only sees a module is a part only an optimizer steps: no model of one Linear, and why.
  const apart = await analyze(file, dir, {}, text('    def make(part):\n        return torch.optim.SGD(part.parameters(), lr=0.1)\n    opt = make(model.fc)'));
  assert.deepEqual(apart.models, []);
  assert.match(apart.diagnostics.find((d) => d.code === 'model-classes-skipped')!.message, /Net \(its constructor needs `classes`\)/);
});

test('torchvision fine-tuning that steps its new head through a name (`fc = model.fc; SGD(fc.parameters())`) trains the ResNet: torch’s trainable count, the backbone frozen', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-head-alias-'));
  const file = join(dir, 'finetune.py');
  const text = [
    'import torch',
    'import torch.nn as nn',
    'import torchvision',
    '',
    'def main():',
    '    model = torchvision.models.resnet18()',
    '    for p in model.parameters():',
    '        p.requires_grad = False',
    '    model.fc = nn.Linear(512, 10)',
    '    fc = model.fc',
    '    optimizer = torch.optim.SGD(fc.parameters(), lr=0.01)',
    '    x = torch.randn(32, 3, 224, 224)',
    '    for step in range(10):',
    '        loss = model(x).sum()',
    '        loss.backward()',
    '        optimizer.step()',
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  ].join('\n');
  writeFileSync(file, text);
  const roots = spawnSync(PYTHON, ['-c', 'import sys; print("\\n".join(p for p in sys.path if p))'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(roots.status, 0, roots.stderr);
  const r = await analyzeSource(file, text, {}, { workspaceFolders: [dir], libraryRoots: roots.stdout.trim().split('\n'), interpreter: PYTHON });
  assert.deepEqual(r.models.map((m) => m.name), ['ResNet'], messages(r));
  const truth = spawnSync(PYTHON, ['-c', 'import torch.nn as nn, torchvision\nm = torchvision.models.resnet18()\nfor p in m.parameters(): p.requires_grad = False\nm.fc = nn.Linear(512, 10)\nprint(sum(p.numel() for p in m.parameters() if p.requires_grad), sum(p.numel() for p in m.parameters() if not p.requires_grad))'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(truth.status, 0, truth.stderr);
  const [trainable, frozen] = truth.stdout.trim().split(/\s+/).map(Number);
  assert.equal(r.models[0]!.totals.params, trainable);
  assert.equal(r.models[0]!.totals.frozenParams, frozen);
  // Frozen, the rest needs no optimizer: nothing to say.
  assert.equal(allDiagnostics(r).find((d) => d.code === 'optimizer-part'), undefined);
  // Without the freeze, the optimizer still steps only the head while the backbone gets gradients: the plan, which
  // prices every trainable parameter as stepped, says so.
  const unfrozen = text.replace('    for p in model.parameters():\n        p.requires_grad = False\n', '');
  const u = await analyzeSource(file, unfrozen, {}, { workspaceFolders: [dir], libraryRoots: roots.stdout.trim().split('\n'), interpreter: PYTHON });
  assert.equal(u.models[0]!.totals.params, trainable + frozen);
  const part = allDiagnostics(u).find((d) => d.code === 'optimizer-part');
  assert.ok(part, messages(u));
  assert.equal(part.severity, 'warning');
  assert.equal(part.line, 9);
  assert.match(part.message, /^SGD steps only part of the model; `conv1`, `bn1`, `layer1\.0\.conv1` and \d+ more still require grad/);
  assert.ok(part.carriesToPlan);
});
