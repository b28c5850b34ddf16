/**
 * Analysis latency on large files: a generated ~2,000-line PyTorch file (many
 * nn.Module classes and nn.Sequential stacks) and a ~2,000-line TF.js file.
 * Measures `analyzeSourceSync` after `initFrontends()`: the first (cold) call
 * and the median of 20 warm calls. Target: ≤ 30 ms warm, the budget for
 * re-analysing on each keystroke in the editor.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { analyzeSourceSync, initFrontends, parseSource } from '../src/frontends/index';

const TARGET_MS = 30;
const WARM_RUNS = 20;

function pytorchBlock(i: number): string {
  const c = 16 * (1 + (i % 8));
  return `
class ResidualBlock${i}(nn.Module):
    """Basic residual block #${i}."""

    def __init__(self, in_ch=${c}, out_ch=${c * 2}, stride=2):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.shortcut = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(out_ch),
        )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class Net${i}(nn.Module):
    def __init__(self, num_classes=${10 + i}):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, ${c}, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(${c}),
            nn.ReLU(inplace=True),
        )
        self.block = ResidualBlock${i}(${c}, ${c * 2})
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(${c * 2}, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.block(x)
        x = torch.flatten(self.pool(x), 1)
        return self.fc(self.dropout(x))


head${i} = nn.Sequential(
    nn.Flatten(),
    nn.Linear(${c * 4}, 256),
    nn.ReLU(),
    nn.Dropout(0.5),
    nn.Linear(256, 10),
)
`;
}

export function generatePytorchFile(minLines: number): string {
  const parts = ['import torch', 'import torch.nn as nn', 'import torch.nn.functional as F', ''];
  let text = parts.join('\n');
  for (let i = 0; text.split('\n').length < minLines; i++) text += pytorchBlock(i);
  return text;
}

function tfjsBlock(i: number): string {
  const f = 8 * (1 + (i % 6));
  return `
export function createCnn${i}(): tf.Sequential {
  const model = tf.sequential();
  model.add(tf.layers.conv2d({ inputShape: [32, 32, 3], filters: ${f}, kernelSize: 3, padding: 'same', activation: 'relu' }));
  model.add(tf.layers.batchNormalization());
  model.add(tf.layers.conv2d({ filters: ${f * 2}, kernelSize: 3, strides: 2, padding: 'same', activation: 'relu' }));
  model.add(tf.layers.maxPooling2d({ poolSize: 2 }));
  model.add(tf.layers.dropout({ rate: 0.25 }));
  model.add(tf.layers.flatten());
  model.add(tf.layers.dense({ units: 128, activation: 'relu' }));
  model.add(tf.layers.dense({ units: 10, activation: 'softmax' }));
  return model;
}

function residual${i}(x: tf.SymbolicTensor, filters: number): tf.SymbolicTensor {
  let y = tf.layers.conv2d({ filters, kernelSize: 3, padding: 'same' }).apply(x) as tf.SymbolicTensor;
  y = tf.layers.batchNormalization().apply(y) as tf.SymbolicTensor;
  y = tf.layers.activation({ activation: 'relu' }).apply(y) as tf.SymbolicTensor;
  return tf.layers.add().apply([x, y]) as tf.SymbolicTensor;
}

export function createResNet${i}(): tf.LayersModel {
  const input = tf.input({ shape: [32, 32, ${f}] });
  let x: tf.SymbolicTensor = input;
  for (let b = 0; b < 2; b++) x = residual${i}(x, ${f});
  x = tf.layers.globalAveragePooling2d({}).apply(x) as tf.SymbolicTensor;
  const output = tf.layers.dense({ units: 10 }).apply(x) as tf.SymbolicTensor;
  return tf.model({ inputs: input, outputs: output });
}
`;
}

export function generateTfjsFile(minLines: number): string {
  let text = "import * as tf from '@tensorflow/tfjs';\n";
  for (let i = 0; text.split('\n').length < minLines; i++) text += tfjsBlock(i);
  return text;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

interface Timing {
  wallMs: number;
  /** CPU time of this process: far less sensitive than wall time to other processes on a shared machine. */
  cpuMs: number;
}

function time(fn: () => void): Timing {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** The same file with one number changed, as after a keystroke: defeats any same-text cache. */
function edited(text: string, run: number): string {
  return text.replace(/\b256\b/, String(257 + run));
}

export default async function (): Promise<Array<{ title: string; rows: Array<Record<string, string | number>> }>> {
  await initFrontends();
  const files = [
    { file: 'generated_models.py', text: generatePytorchFile(2000) },
    { file: 'generated_models.ts', text: generateTfjsFile(2000) },
  ];
  const rows: Array<Record<string, string | number>> = [];
  for (const { file, text } of files) {
    const cold = time(() => analyzeSourceSync(file, text));
    const warm = Array.from({ length: WARM_RUNS }, () => time(() => analyzeSourceSync(file, text)));
    const edits = Array.from({ length: WARM_RUNS }, (_, i) => edited(text, i));
    const warmEdited = edits.map((t) => time(() => analyzeSourceSync(file, t)));
    const parseOnly = Array.from({ length: WARM_RUNS }, (_, i) => time(() => parseSource(file, edits[(i + 1) % WARM_RUNS])));
    const result = analyzeSourceSync(file, text);
    const warmCpu = median(warm.map((t) => t.cpuMs));
    rows.push({
      file,
      lines: text.split('\n').length,
      models: result.models.length,
      layers: result.models.reduce((n, m) => n + m.layers.length, 0),
      'cold ms': cold.wallMs,
      'warm ms': median(warm.map((t) => t.wallMs)),
      'warm cpu ms': warmCpu,
      'edited warm ms': median(warmEdited.map((t) => t.wallMs)),
      'edited warm cpu ms': median(warmEdited.map((t) => t.cpuMs)),
      'parse-only edited cpu ms': median(parseOnly.map((t) => t.cpuMs)),
      'target ms': TARGET_MS,
      'warm cpu / target': warmCpu / TARGET_MS,
    });
  }
  return [
    ...importRows(),
    {
      title: `analyzeSourceSync on ~2,000-line files: cold = first call; warm = median of ${WARM_RUNS} (same text); edited = median of ${WARM_RUNS} one-number edits`,
      rows,
    },
  ];
}

/**
 * A training script whose model lives in a sibling file (nanoGPT layout, the
 * test fixture): imports followed, imported trees cached per file version.
 * `follow ms` isolates what following costs: the same script with a small
 * GPT config, so the model's own shape inference hardly counts.
 */
function importRows(): Array<{ title: string; rows: Array<Record<string, string | number>> }> {
  const dir = join(__dirname, '..', 'test', 'fixtures', 'nanogpt');
  const file = join(dir, 'train.py');
  const text = readFileSync(file, 'utf8');
  const small = text.replace(/GPT\(GPTConfig\([^)]*\)\)/, 'GPT(GPTConfig(n_layer=1, n_head=2, n_embd=64, block_size=64, vocab_size=128))');
  // The baseline: the same model and script in one file, nothing to follow.
  const oneFile = readFileSync(join(dir, 'model.py'), 'utf8') + '\n' + text.replace(/^from model import .*$/m, '');
  const run = (t: string, f: string, root: string) => analyzeSourceSync(f, t, {}, { workspaceFolders: [root] });
  const rows: Array<Record<string, string | number>> = [];
  // Hydra projects compose their config on every analysis (hydraCompose.ts): the nanoGPT one, and one in
  // lightning-hydra-template's shape that instantiates its LightningModule and net from _target_.
  const hydra = join(dir, 'hydra_train.py');
  const lightning = join(__dirname, '..', 'test', 'fixtures', 'hydra-lightning');
  const lightningTrain = join(lightning, 'src', 'train.py');
  const cases = [
    ['train.py → model.py (GPT 24×1024)', text, file, dir],
    ['same, one file (no import)', oneFile, join(dir, 'one_file.py'), dir],
    ['train.py → model.py (GPT 1×64)', small, file, dir],
    ['hydra_train.py: Hydra config (2 files) → model.py', readFileSync(hydra, 'utf8'), hydra, dir],
    ['hydra-lightning src/train.py: 5 config groups, instantiate', readFileSync(lightningTrain, 'utf8'), lightningTrain, lightning],
  ] as const;
  for (const [name, t, f, root] of cases) {
    const run1 = () => run(t, f, root);
    const cold = time(run1);
    const warm = Array.from({ length: WARM_RUNS }, () => time(run1));
    const result = run1();
    const warmCpu = median(warm.map((x) => x.cpuMs));
    rows.push({
      file: name,
      layers: result.models.reduce((n, m) => n + m.layers.length, 0),
      params: result.models[0]?.totals.params ?? 0,
      'cold ms': cold.wallMs,
      'warm ms': median(warm.map((x) => x.wallMs)),
      'warm cpu ms': warmCpu,
      'target ms': TARGET_MS,
      'warm cpu / target': warmCpu / TARGET_MS,
    });
  }
  return [{ title: `analyzeSourceSync following imports (nanoGPT layout, Hydra projects; warm = median of ${WARM_RUNS}, imported trees cached per file version)`, rows }];
}
