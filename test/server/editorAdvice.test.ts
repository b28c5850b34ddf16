/**
 * Advice in the editor speaks in editor terms: the rooms word advice for the
 * CLI (`--input 3,224,224`, `wap export --format …`), the server rewords it
 * for diagnostics and hovers, and where there is a click (the parallelize()
 * export) it is a quick fix. The CLI keeps its flags (test/cli covers those).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CodeActionRequest, type CodeAction } from 'vscode-languageserver-protocol/node';
import { ClientCommands } from '../../src/protocol/commands';
import { PlanRequest, SetConfigModelsNotification } from '../../src/protocol/lsp';
import { forEditor } from '../../src/server/editorAdvice';
import { ROOT, TestServer } from './harness';

/** A CLI flag or command in a text meant for the editor. */
const CLI = /(^|[\s(`])--(input|seq-len|gpus|precision|python|tp|pp|dp|cp|ep|micro-batch)\b|\bwap (export|config|plan|profile|validate)\b/;

test('each piece of CLI advice the rooms give has an editor wording without flags', () => {
  // The rooms' own wording (src/core/analyze.ts, src/frontends, src/configs, src/planner, src/validate).
  const cli = [
    "No input shape for Net: assumed 3×224×224, an ImageNet image, without batch. Override with `--input 3,224,224` or state the shape in the model code.",
    "No input shape for Bert input 'input_ids': assumed 512, the config's max positions, without batch. Override with `--input 512`.",
    "No input shape for Bert input 'input_ids': assumed [512], the max_position_embeddings of ./bert (512 tokens), without batch. Override with `--input 512` or `--seq-len T`.",
    'No input shape for Tagger: assumed [1024], a sequence of 1024 token ids, without batch. Override with `--input 1024`, `--seq-len T` or state the shape in the model code.',
    'input shape [null, 128] has a variable dimension; give one with --input',
    "Net's forward computes sizes from its input's shape: WAP read it for an input of [16, 32] (without batch). For another size, give it (`--input`), or run the model on an example of that size in the code (`model(torch.randn(…))`).",
    'model is read for the input [3, 32, 32] (without batch) from the call model(torch.randn(8, 3, 32, 32)) at line 12; `--input` reads it for another.',
    'input shape 3×224×224 is assumed; pass --input to set it',
    '512 tokens per sample is assumed (the max_position_embeddings of ./bert (512 tokens)); pass --seq-len to set it',
    'DeepSpeed configs have no tensor, pipeline or context parallel degrees; export the plan with `wap export --format torch-parallelize` (PyTorch DTensor) or use Megatron-LM arguments',
    'DP on 4 GPUs but fc1, fc2 want model parallelism: consider splitting them across GPUs (export runnable code with `wap export --format torch-parallelize`) or a tensor-parallel strategy',
    'The plan pipelines the model in 2 stages with 8 micro-batches (1f1b); a plain data-parallel launch does not: see `wap export --format torch-parallelize`',
    'train_batch_size 64 = 8 × 2 × world holds only on 4 GPU(s); WAP cannot check the world size without a model plan (wap config --model …)',
    "--gpus 16 asks for more GPUs than cluster 'pcie4' has (4)",
    'dp × tp × pp × cp = 2 × 2 × 1 × 1 = 4, not the 8 GPUs of --gpus',
    "GPU 'X' has no peakTflops.bf16 in the cluster spec: add \"peakTflops\": { \"bf16\": <dense TFLOPS from its datasheet> } to the GPU, or choose another --precision",
    '--tp 3: 32 heads are not divisible by 3',
    'virtual stages 2: interleaving needs a pipeline (--pp > 1)',
    'cannot validate: python3 cannot import torch (No module named torch); choose an interpreter with torch (--python)',
  ];
  for (const text of cli) {
    assert.match(text, CLI, `the sample is CLI-worded: ${text}`);
    const editor = forEditor(text);
    assert.doesNotMatch(editor, CLI, `still CLI-worded in the editor: ${editor}`);
  }
  assert.match(forEditor(cli[0]), /state the input shape in the model code: run the model on an example \(`model\(torch\.randn\(8, 3, 32, 32\)\)`\), set a LightningModule's `example_input_array`/);
  assert.match(forEditor(cli.find((t) => t.startsWith('DeepSpeed'))!), /"WAP: Export plan as…" → PyTorch parallelize\(\)/);
  // Flags that are the config file's own content (a launch script's --nproc_per_node) stay as written.
  assert.equal(forEditor('--nproc_per_node=8 but the plan uses 4 GPUs'), '--nproc_per_node=8 but the plan uses 4 GPUs');
});

let server: TestServer;
before(async () => {
  server = await TestServer.start({ clientCommands: true, settings: { cluster: 'pcie4', batchSize: 128 } });
});
after(async () => server?.stop());

test('a model without a stated input: the diagnostic and the hover say to state it in the code, not --input', async () => {
  const path = join(ROOT, 'examples/pytorch/advice_mlp.py');
  const text = 'import torch.nn as nn\n\nclass MLP(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(1024, 10)\n\n    def forward(self, x):\n        return self.fc(x)\n';
  const uri = await server.open(path, text, 'python');
  const diag = await server.until('the assumed-input notice', () => server.diagnostics.get(uri)?.find((d) => d.code === 'assumed-input'));
  assert.doesNotMatch(diag.message, CLI);
  await server.planned(uri);
  // The plan view shows the planner's notes: the same wording.
  const { outcome } = await server.conn.sendRequest(PlanRequest, { uri, reuse: true });
  for (const d of outcome.diagnostics) assert.doesNotMatch(d.message, CLI);
  for (let line = 0; line < text.split('\n').length; line++) assert.doesNotMatch(await server.hoverText(uri, line, 12), CLI);
});

test('a data-parallel config against a model-parallel plan: the export advice is a quick fix that exports parallelize() code of that model', async () => {
  const alexnet = pathToFileURL(join(ROOT, 'examples/pytorch/alexnet.py')).href;
  const uri = await server.open(join(ROOT, 'examples/configs/advice_accelerate.yaml'), 'distributed_type: MULTI_GPU\nnum_processes: 4\nmixed_precision: "no"\n', 'yaml');
  await server.conn.sendNotification(SetConfigModelsNotification, { models: { [uri]: alexnet } });
  const diag = await server.until('the model-parallel advice', () => server.diagnostics.get(uri)?.find((d) => d.code === 'model-parallel-advice'), 90_000);
  assert.doesNotMatch(diag.message, CLI);
  assert.match(diag.message, /"WAP: Export plan as…" → PyTorch parallelize\(\)/);
  const actions = (await server.conn.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] } })) as CodeAction[];
  const exportFix = actions.find((a) => a.command?.command === ClientCommands.exportPlan);
  assert.equal(exportFix?.title, 'Export the plan as PyTorch parallelize() code…');
  assert.deepEqual(exportFix?.command?.arguments, [alexnet, 'alexnet', 'torch-parallelize']);
  for (const d of server.diagnostics.get(uri) ?? []) assert.doesNotMatch(d.message, CLI);
});
