import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { parse as parseYaml } from 'yaml';
import { configCommand } from '../../src/cli/commands/config';
import { exportCommand } from '../../src/cli/commands/export';
import { CliError } from '../../src/cli/cliError';
import { root } from './helpers';
import { capture } from '../cli/helpers';

const dir = mkdtempSync(join(tmpdir(), 'wap-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const model = join(root, 'test/configs/data/mlp.py');
// --gpus 2 pins the plan's GPU count so the expectations do not depend on cost-model tuning.
const planFlags = ['--model', model, '--input', '8192', '--gpus', '2'];

function script(name: string, nproc: number): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/bash\n# launch\ntorchrun --standalone --nproc_per_node=${nproc} train.py\n`);
  return file;
}

test('wap config: 0 when the config matches the plan, 1 with file:line:col lines when it does not', async () => {
  const clean = await capture(() => configCommand.run([script('clean.sh', 2), ...planFlags]));
  assert.equal(clean.code, 0, clean.out + clean.err);
  // The launched train.py is not on disk: the launch's own process count is "your config".
  assert.match(clean.out, /^\S+clean\.sh: your config \(2 GPUs, as clean\.sh launches it\): .* · best plan: .*\n$/);

  const file = script('mismatch.sh', 4);
  const bad = await capture(() => configCommand.run([file, ...planFlags]));
  assert.equal(bad.code, 1);
  const lines = bad.out.trim().split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[1]!, /mismatch\.sh: your config \(4 GPUs, as mismatch\.sh launches it\)/);
  assert.match(lines[0]!, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:40: warning: 4 processes requested; the plan .* on 2 GPUs.* \\[gpu-count\\]$`));
});

test('wap config --fix writes the quick-fix edits and then exits 0', async () => {
  const file = script('fixme.sh', 4);
  const before = readFileSync(file, 'utf8');
  const r = await capture(() => configCommand.run([file, ...planFlags, '--fix']));
  assert.equal(r.code, 0, r.out);
  assert.match(r.err, /applied 1 edit\(s\)/);
  assert.equal(readFileSync(file, 'utf8'), before.replace('--nproc_per_node=4', '--nproc_per_node=2'));
});

test('wap config without --model checks internal consistency only', async () => {
  const file = join(dir, 'ds_config.json');
  writeFileSync(file, '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 32,\n  "gradient_accumulation_steps": 1\n}\n');
  const r = await capture(() => configCommand.run([file]));
  assert.equal(r.code, 1);
  assert.match(r.out, /ds_config\.json:2:23: error: train_batch_size 100 is not micro 32 × accum 1 × any world size/);
});

test('wap config: the best plan trains in the precision the checked config states, not one from files beside the model', async () => {
  // examples/pytorch (gpt.py's directory) holds an accelerate config that says fp32; the checked FSDP config says bf16.
  const fsdp = join(root, 'examples', 'configs', 'accelerate_fsdp.yaml');
  const r = await capture(() => configCommand.run([fsdp, '--model', join(root, 'examples', 'pytorch', 'gpt.py'), '--cluster', 'h100x16-2node', '--json']));
  const out = JSON.parse(r.out) as { best: { setup: { precision: string; precisionReason: string } }; yours: { setup: { precision: string }; stepTimeMs: number } };
  assert.equal(out.best.setup.precision, 'bf16');
  assert.match(out.best.setup.precisionReason, /accelerate_fsdp\.yaml/);
  assert.equal(out.yours.setup.precision, 'bf16');
});

test('wap config: bad input is a one-line error with exit 2', async () => {
  const notConfig = join(dir, 'notes.txt');
  writeFileSync(notConfig, 'hello\n');
  for (const args of [[notConfig], [join(dir, 'missing.yaml')], [script('ok.sh', 2), '--model', join(dir, 'missing.py')], [script('ok2.sh', 2), '--bogus']]) {
    await assert.rejects(configCommand.run(args), (e: unknown) => e instanceof CliError && e.exitCode === 2 && !e.message.includes('\n'));
  }
});

test('wap export writes DeepSpeed and Accelerate files holding the plan numbers', async () => {
  const out = join(dir, 'ds.json');
  const r = await capture(() => exportCommand.run([model, '--input', '8192', '--gpus', '2', '--format', 'deepspeed', '--out', out]));
  assert.equal(r.code, 0);
  const ds = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(ds.train_batch_size, 128);
  assert.equal(ds.train_micro_batch_size_per_gpu * ds.gradient_accumulation_steps * 2, 128);

  const accOut = join(dir, 'accelerate.yaml');
  assert.equal((await capture(() => exportCommand.run([model, '--input', '8192', '--gpus', '2', '--format', 'accelerate', '--out', accOut]))).code, 0);
  const cfg = parseYaml(readFileSync(accOut, 'utf8'));
  assert.equal(cfg.num_processes, 2);
  assert.equal(cfg.gpu_ids, '0,1');
  const runOut = join(dir, 'launch.sh');
  assert.equal((await capture(() => exportCommand.run([model, '--input', '8192', '--gpus', '2', '--format', 'torchrun', '--out', runOut]))).code, 0);
  assert.match(readFileSync(runOut, 'utf8'), /^torchrun --standalone --nproc_per_node=2 /m);
  await assert.rejects(exportCommand.run([model, '--format', 'slurm']), (e: unknown) => e instanceof CliError && /--format must be one of/.test(e.message));
});

test('the real CLI process exits 1 on a mismatch and 2 on bad input', async () => {
  // Bundled once with esbuild (as scripts/build.mjs does, but into the temp dir): a tsx
  // start-up per spawn costs seconds on a loaded machine. Wasm files resolve from node_modules via cwd.
  const bundle = join(dir, 'cli.js');
  // Same bundling options as the node entries in scripts/build.mjs.
  await build({
    entryPoints: [join(root, 'src/cli/main.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'silent',
    external: ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'],
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    define: { 'import.meta.url': '__wapImportMetaUrl' },
    banner: { js: "var __wapImportMetaUrl = require('url').pathToFileURL(__filename).href;" },
  });
  const cli = (args: string[]) => spawnSync(process.execPath, [bundle, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  const mismatch = cli(['config', script('proc.sh', 4), ...planFlags]);
  assert.equal(mismatch.status, 1, mismatch.stderr);
  assert.match(mismatch.stdout, /proc\.sh:3:40: warning: /);
  const bad = cli(['config', join(dir, 'nope.yaml')]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^wap: cannot read config file/);
});

test('wap config on a script whose model file builds an instance of the class it imports: that instance is planned, not "no model named"', async () => {
  const project = mkdtempSync(join(dir, 'instance-'));
  // examples/pytorch/gpt.py defines class GPT and ends with `model = GPT(GPTConfig())`, which WAP reads as the model.
  writeFileSync(join(project, 'model.py'), readFileSync(join(root, 'examples/pytorch/gpt.py'), 'utf8'));
  const train = join(project, 'train.py');
  writeFileSync(train, 'import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\nfrom model import GPT\n\nmodel = DDP(GPT())\n');
  writeFileSync(join(project, 'run.sh'), '#!/bin/bash\ntorchrun --nproc_per_node 2 train.py\n');
  const r = await capture(() => configCommand.run([train, '--cluster', 'a100x8', '--batch', '16']));
  assert.doesNotMatch(r.err, /no model named/);
  assert.match(r.err, /comparing with the model in .*model\.py, found by imported by train\.py, the PyTorch script train\.py/);
  assert.match(r.out + r.err, /your config \(2 GPUs, as run\.sh launches it\): /);
});

test('wap config: a launch on a GPU count the script’s own assert refuses is an error naming the assert, in both files', async () => {
  const source = [
    'import os', 'import torch', 'import torch.nn as nn', 'from torch.nn.parallel import DistributedDataParallel as DDP', '',
    'class Net(nn.Module):', '    def __init__(self):', '        super().__init__()', '        self.fc1 = nn.Linear(1024, 4096)', '        self.fc2 = nn.Linear(4096, 1000)',
    '    def forward(self, x):', '        return self.fc2(torch.relu(self.fc1(x)))', '',
    'batch_size = 32', 'gradient_accumulation_steps = 8', "world_size = int(os.environ.get('WORLD_SIZE', 1))",
    'assert gradient_accumulation_steps % world_size == 0', 'gradient_accumulation_steps //= world_size',
    'model = DDP(Net().cuda())', 'opt = torch.optim.AdamW(model.parameters())',
    'for micro in range(gradient_accumulation_steps):', "    model(torch.randn(batch_size, 1024, device='cuda')).sum().backward()", 'opt.step()', '',
  ].join('\n');
  // A folder per launch: the reads are cached by file, as in one editor session.
  const project = (nproc: number): string => {
    const folder = join(dir, `asserted-${nproc}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'train.py'), source);
    writeFileSync(join(folder, 'run.sh'), `#!/bin/bash\ntorchrun --nproc_per_node ${nproc} train.py\n`);
    return folder;
  };
  const three = project(3);
  const run = join(three, 'run.sh');
  const train = join(three, 'train.py');
  const assertSaid = 'train.py:17 asserts `gradient_accumulation_steps % world_size == 0` (gradient_accumulation_steps 8), and 8 is not a multiple of 3';
  const launch = await capture(() => configCommand.run([run, '--cluster', 'a100x8', '--strategies', 'dp']));
  assert.equal(launch.code, 1, launch.out + launch.err);
  assert.ok(launch.out.includes(`run.sh:2:27: error: 3 processes requested, but the script stops on 3 GPUs: ${assertSaid}; the plan uses `), launch.out);
  // run.sh states only its processes: its "your config" is the script's own DDP setup on them.
  assert.ok(launch.out.includes(`run.sh: your config (3 GPUs, as run.sh launches it): the script stops on 3 GPUs: ${assertSaid} · best plan: `), launch.out);
  const four = await capture(() => configCommand.run([join(project(4), 'run.sh'), '--cluster', 'a100x8', '--strategies', 'dp']));
  assert.match(four.out, /run\.sh: your config \(4 GPUs, as run\.sh launches it\): [\d.]+ ms\/step, \d+% MFU, fits \([\d.]+ GB\/GPU\) · best plan: /);
  const script = await capture(() => configCommand.run([train, '--cluster', 'a100x8', '--strategies', 'dp']));
  assert.ok(script.out.includes(`train.py: your config (3 GPUs, as run.sh launches it): the script stops on 3 GPUs: ${assertSaid} · best plan: `), script.out);
});
