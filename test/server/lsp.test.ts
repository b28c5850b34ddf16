/**
 * The real server over stdio: capabilities, hover naming the planned strategy
 * and devices, a CodeLens per model, executeCommand and the wap/plan request.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeActionKind, ExecuteCommandRequest } from 'vscode-languageserver-protocol/node';
import { ModelsRequest, PlanRequest, ServerCommands, type PlanResult } from '../../src/protocol/lsp';
import { find, ROOT, TestServer } from './harness';
import { formatMs } from '../../src/server/format';

const CNN = join(ROOT, 'examples/tfjs/cnn.ts');
const ALEXNET = join(ROOT, 'examples/pytorch/alexnet.py');
const VGG = join(ROOT, 'examples/pytorch/vgg.py');

let server: TestServer;
before(async () => {
  server = await TestServer.start({ trusted: false, settings: { cluster: 'pcie4', batchSize: 128 } });
});
after(async () => server?.stop());

test('initialize answers with hover, CodeLens, code action and command capabilities', () => {
  const caps = server.init.capabilities;
  assert.equal(caps.hoverProvider, true);
  assert.ok(caps.codeLensProvider);
  const kinds = (caps.codeActionProvider as { codeActionKinds: string[] }).codeActionKinds;
  assert.ok(kinds.includes(CodeActionKind.QuickFix));
  assert.ok(kinds.includes('source.fixAll.wap'));
  assert.deepEqual(caps.executeCommandProvider?.commands.sort(), Object.values(ServerCommands).sort());
});

test('the status notification says the workspace is untrusted and nothing is spawned', async () => {
  const status = await server.until('a status', () => server.statuses.at(-1));
  assert.equal(status.trusted, false);
  assert.match(status.tooltip, /not trusted/);
  assert.match(status.tooltip, /No process is spawned/);
});

test('TF.js CNN: a CodeLens for the model, then the hover names strategy and devices', async () => {
  const text = readFileSync(CNN, 'utf8');
  const uri = await server.open(CNN, text);
  const lenses = await server.planned(uri);
  assert.equal(lenses.length, 1);
  assert.match(lenses[0].command!.title, /^\d+ GPUs? · [a-z ]+ · .*\(predicted\)$/);
  assert.equal(lenses[0].command!.command, ServerCommands.parallelizeModel);

  const plan = await server.conn.sendRequest(PlanRequest, { uri, reuse: true });
  assert.equal(plan.outcome.feasible, true);
  if (!plan.outcome.feasible) return;
  const dense = plan.outcome.plan.layers.find((l) => l.type.toLowerCase().includes('dense'))!;
  const at = find(text, 'tf.layers.dense({ units: 256');
  const hover = await server.hoverText(uri, at.line, at.character + 12);
  assert.match(hover, /\*\*Strategy:\*\*/);
  const word = { data: /data parallel|single GPU/, model: /model parallel/, hybrid: /hybrid/, pipeline: /pipeline/ }[dense.strategy];
  assert.match(hover, word);
  assert.match(hover, /on GPU \d/);
  assert.ok(hover.includes(`GPU ${dense.devices[0]}`), `hover should name device ${dense.devices[0]}:\n${hover}`);
  assert.match(hover, /forward .* backward .*estimated/);
  // The numbers are this layer's, each under its own name.
  assert.ok(hover.includes(`forward ${formatMs(dense.forwardMs)} · backward ${formatMs(dense.backwardMs)} per iteration`), hover);
  assert.notEqual(formatMs(dense.forwardMs), formatMs(dense.backwardMs), 'the case tells forward from backward');
  assert.match(hover, /memory per GPU/);
  assert.match(hover, /\*\*Why:\*\*/);
});

test('wap/models lists models with LSP ranges; wap/plan honours control overrides', async () => {
  const uri = await server.open(CNN);
  const { models } = await server.conn.sendRequest(ModelsRequest, { uri });
  assert.equal(models.length, 1);
  assert.ok(models[0].layers > 5);
  assert.ok(models[0].range.start.line >= 0);
  const two: PlanResult = await server.conn.sendRequest(PlanRequest, { uri, model: models[0].name, controls: { gpus: 2 } });
  assert.equal(two.controls.gpus, 2);
  assert.equal(two.outcome.feasible && two.outcome.plan.gpus, 2);
  assert.equal(two.maxGpus, 4);
});

test('wap/plan: going back to Auto after a fixed GPU count lets the planner choose again', async () => {
  const uri = await server.open(CNN);
  const { models } = await server.conn.sendRequest(ModelsRequest, { uri });
  const model = models[0].name;
  const fixed: PlanResult = await server.conn.sendRequest(PlanRequest, { uri, model, controls: { gpus: 3, objective: 'throughput', strategies: 'hybrid', batch: 128 } });
  assert.equal(fixed.controls.gpus, 3);
  // The panel's "Auto" sends the whole control set without `gpus`.
  const auto: PlanResult = await server.conn.sendRequest(PlanRequest, { uri, model, controls: { objective: 'throughput', strategies: 'hybrid', batch: 128 } });
  assert.equal(auto.controls.gpus, undefined);
  assert.ok(auto.outcome.feasible);
  const best = Math.max(...auto.outcome.scaling.filter((p) => p.feasible).map((p) => p.samplesPerSec));
  assert.equal(auto.outcome.plan.samplesPerSec, best, 'Auto picks the fastest count, not the earlier fixed one');
  // A later background/reuse plan keeps Auto too.
  const again: PlanResult = await server.conn.sendRequest(PlanRequest, { uri, model, reuse: true });
  assert.equal(again.controls.gpus, undefined);
});

test('executeCommand wap.server.parallelizeModel plans and answers the plan', async () => {
  const uri = await server.open(CNN);
  const result = (await server.conn.sendRequest(ExecuteCommandRequest.type, { command: ServerCommands.parallelizeModel, arguments: [uri] })) as PlanResult;
  assert.equal(result.outcome.feasible, true);
  assert.ok(result.model.length > 0);
  const summary = (await server.conn.sendRequest(ExecuteCommandRequest.type, { command: ServerCommands.planSummary, arguments: [uri] })) as string;
  assert.match(summary, /\| line \| layer \| type \| strategy \|/);
});

for (const [file, layerLine] of [
  [ALEXNET, 'nn.Linear(4096, 4096)'],
  [VGG, 'nn.Linear(4096, 4096)'],
] as const) {
  test(`PyTorch ${file.split('/').pop()}: hover on a Linear layer names strategy and devices`, { skip: !existsSync(file) && 'example not written yet' }, async () => {
    const text = readFileSync(file, 'utf8');
    const uri = await server.open(file, text);
    const lenses = await server.planned(uri);
    assert.ok(lenses.length >= 1);
    const at = find(text, layerLine);
    const hover = await server.hoverText(uri, at.line, at.character + 4);
    assert.match(hover, /\*\*Strategy:\*\* (data parallel|model parallel|hybrid|single GPU|pipeline)/);
    assert.match(hover, /on GPU \d/);
    assert.match(hover, /params 16\.78 M/); // 4096×4096 + 4096
    // The plan's training setup, with the precision read from examples/pytorch/accelerate_config.yaml.
    assert.match(hover, /_Setup: fp32 \(from accelerate\\_config\.yaml \(mixed\\_precision: no\)\) · DP \d+ × TP \d+ × PP \d+(?: \(most parameters; also [^)]+\))? · ZeRO-\d · recompute none · micro-batch [\d.]+ × \d+ · MFU [\d.]+%_/);
  });
}
