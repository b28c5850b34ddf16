/**
 * Profiler bench on the wasm backend (the embedded default):
 * - fidelity = Σ per-layer (forward + backward) ÷ one measured whole training
 *   step on the same backend, for the example CNNs at reduced input (raw, no
 *   calibration applied);
 * - time to profile VGG-16 at batch 8 on 32×32 input, and its cached re-run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnalyzedModel } from '../src/core/ir';
import { analyzeSource } from '../src/frontends/index';
import { profileModel } from '../src/profiler/index';
import { vgg16 } from '../test/profiler/fixtures';

const root = join(__dirname, '..');

async function example(file: string, input: number[], name?: string): Promise<AnalyzedModel | undefined> {
  try {
    const r = await analyzeSource(file, readFileSync(join(root, file), 'utf8'), { inputShape: input });
    return name ? r.models.find((m) => m.name === name) : r.models[0];
  } catch {
    return undefined;
  }
}

export default async function (): Promise<Array<{ title: string; rows: Array<Record<string, string | number>> }>> {
  const dir = mkdtempSync(join(tmpdir(), 'wap-bench-prof-'));
  const fidelityRows: Array<Record<string, string | number>> = [];
  const timingRows: Array<Record<string, string | number>> = [];
  try {
    const models: Array<[string, AnalyzedModel | undefined, number]> = [
      ['examples/tfjs/cnn.ts @16×16×3', await example('examples/tfjs/cnn.ts', [16, 16, 3]), 8],
      ['examples/pytorch/alexnet.py @3×64×64', await example('examples/pytorch/alexnet.py', [3, 64, 64]), 4],
      ['examples/pytorch/resnet.py @3×32×32', await example('examples/pytorch/resnet.py', [3, 32, 32]), 4],
    ];
    for (const [label, model, batch] of models) {
      if (!model) {
        fidelityRows.push({ model: label, note: 'frontend could not read it' });
        continue;
      }
      const p = await profileModel(model, { backend: 'wasm', batch, cacheDir: join(dir, 'fid'), trusted: true, wholeStep: true, warmup: 2, repetitions: 7, trialTimeoutMs: 300_000 });
      const sum = p.layers.reduce((s, l) => s + l.forwardMs + l.backwardMs, 0);
      const fallback = p.layers.filter((l) => l.status === 'fallback').length;
      fidelityRows.push({
        model: label,
        batch,
        layers: p.layers.length,
        fallback,
        'Σ layers ms': sum,
        'whole step ms': p.wholeStep?.ms ?? NaN,
        'fidelity (raw)': p.wholeStep ? sum / p.wholeStep.ms : NaN,
      });
    }
    const vgg = (await example('examples/pytorch/vgg.py', [3, 32, 32], 'vgg16')) ?? vgg16(32);
    const cache = join(dir, 'vgg');
    let t0 = Date.now();
    const first = await profileModel(vgg, { backend: 'wasm', batch: 8, cacheDir: cache, trusted: true, trialTimeoutMs: 300_000 });
    const firstMs = Date.now() - t0;
    t0 = Date.now();
    const again = await profileModel(vgg, { backend: 'wasm', batch: 8, cacheDir: cache, trusted: true, trialTimeoutMs: 300_000 });
    const againMs = Date.now() - t0;
    timingRows.push(
      { run: `VGG-16 (${vgg.name}) batch 8 @32×32, first`, layers: first.layers.length, measured: first.layers.filter((l) => l.status === 'measured').length, 'wall s': firstMs / 1000 },
      { run: 'same, cached re-run (target ≤ 1 s)', layers: again.layers.length, cached: again.layers.filter((l) => l.status === 'cached').length, 'wall s': againMs / 1000 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    { title: 'Profiler fidelity on wasm: Σ per-layer (fwd+bwd) ÷ whole training step (target 0.9–1.1)', rows: fidelityRows },
    { title: 'Profiler wall time on wasm', rows: timingRows },
  ];
}
