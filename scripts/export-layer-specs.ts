/**
 * Writes the example models' layer specs (what a trial worker builds) as JSON
 * under bench/gpu-specs/, for scripts/gpu-check.sh to time with the torch worker
 * on a GPU machine without any npm build. Run: node --import tsx scripts/export-layer-specs.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSource } from '../src/frontends/index';
import { modelInputSpecs, toTrialSpec } from '../src/profiler/trialSpecs';

const root = join(__dirname, '..');
const outDir = join(root, 'bench', 'gpu-specs');

/** [file, input shape or undefined for the file's own, batch, output name]. */
const MODELS: Array<[string, number[] | undefined, number, string]> = [
  ['examples/tfjs/cnn.ts', [32, 32, 3], 64, 'tfjs-cnn'],
  ['examples/pytorch/alexnet.py', [3, 224, 224], 64, 'pytorch-alexnet'],
  ['examples/pytorch/vgg.py', [3, 224, 224], 32, 'pytorch-vgg'],
  ['examples/pytorch/resnet.py', [3, 224, 224], 32, 'pytorch-resnet'],
];

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  for (const [file, input, batch, name] of MODELS) {
    const r = await analyzeSource(file, readFileSync(join(root, file), 'utf8'), input ? { inputShape: input } : {});
    const model = r.models[0];
    if (!model) {
      console.error(`${file}: no model (${r.diagnostics.map((d) => d.message).join('; ')})`);
      continue;
    }
    const body = {
      model: `${name} (${model.name})`,
      file,
      layout: model.layout,
      batch,
      specs: model.layers.map((l) => toTrialSpec(l, model)),
      inputs: modelInputSpecs(model),
      outputs: model.outputs,
    };
    writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(body)}\n`);
    console.log(`${name}: ${model.name}, ${model.layers.length} layers, input ${model.input.join('x')}, batch ${batch}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
