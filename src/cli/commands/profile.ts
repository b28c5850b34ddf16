/**
 * `wap profile <model-file> [--model NAME] [--input C,H,W] [--backend B] [--batch N]
 *  [--out profile.json] [--cache DIR] [--repetitions N] [--fidelity]`:
 * times every layer in isolated trial workers and writes the versioned profile
 * JSON that `wap plan --profile` reads.
 */
import { resolve } from 'node:path';
import { writeProfile } from '../../profiler/index';
import type { ProfileFile } from '../../protocol/profile';
import { parseCommandArgs, positiveInt, singlePositional } from '../args';
import { describePython, fmtMs, measureModel, measureSettingsFrom, PROFILER_FLAGS, PROFILER_FLAGS_HELP, statusCounts } from '../measure';
import { writingTo } from '../files';
import { MODEL_SOURCE_FLAGS, MODEL_SOURCE_HELP, loadModel } from '../modelLoading';
import type { CliCommand } from './registry';

const DEFAULT_BATCH = 8;

const HELP = `Usage: wap profile <model-file> [options]

Times each layer's forward and backward pass in isolated worker processes and
writes a profile JSON for 'wap plan --profile'. ('wap plan --measure' does both
in one run.)

Options:
  --model NAME          which model in the file (default: the first)
  --input SHAPE         input shape without batch, e.g. 3,32,32
  --batch N             batch size (default ${DEFAULT_BATCH})
  --out FILE            profile to write (default profile.json)
${PROFILER_FLAGS_HELP}
${MODEL_SOURCE_HELP}
  --fidelity            also time one whole training step and report Σ layers ÷ step`;

export function profileTable(p: ProfileFile): string[] {
  const dev = new Map(p.devices.map((d) => [d.index, d]));
  const rows = p.layers.map((l) => [
    l.layer,
    fmtMs(l.forwardMs),
    fmtMs(l.backwardMs),
    `${(l.forwardSpread * 100).toFixed(0)}%/${(l.backwardSpread * 100).toFixed(0)}%`,
    l.status,
    `${dev.get(l.device)?.backend ?? '?'} / ${dev.get(l.device)?.name ?? '?'}`,
  ]);
  const header = ['Layer', 'Fwd ms', 'Bwd ms', 'Spread', 'Status', 'Backend / device'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const right = new Set([1, 2, 3]);
  const line = (cells: string[]) => cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('profile', HELP, args, {
    ...PROFILER_FLAGS,
    ...MODEL_SOURCE_FLAGS,
    model: { type: 'string' },
    input: { type: 'string' },
    batch: { type: 'string' },
    out: { type: 'string' },
    fidelity: { type: 'boolean' },
  });
  if (!parsed) return 0;
  const v = parsed.values;
  const file = singlePositional('profile', parsed.positionals, 'model file');
  const settings = measureSettingsFrom(v);
  const batch = positiveInt('batch', v.batch) ?? DEFAULT_BATCH;
  const model = await loadModel(file, { input: v.input, 'seq-len': v['seq-len'], python: v.python, 'script-args': v['script-args'], modelName: v.model });
  const out = resolve(v.out ?? 'profile.json');
  const profile = await measureModel(model, settings, { batch, file, wholeStep: v.fidelity });
  writingTo(out, () => writeProfile(out, profile));
  console.log(`Profile of ${model.name} (batch ${batch}) → ${out}`);
  for (const l of profileTable(profile)) console.log(l);
  const sum = profile.layers.filter((l) => l.device === profile.layers[0]?.device).reduce((s, l) => s + l.forwardMs + l.backwardMs, 0);
  const counts = statusCounts(profile);
  console.log(`Σ layers ${fmtMs(sum)} ms; ${counts.measured} measured, ${counts.cached} cached, ${counts.fallback} fallback`);
  if (profile.python) console.log(`Measured with ${describePython(profile.python)}`);
  if (profile.wholeStep) console.log(`Whole training step ${fmtMs(profile.wholeStep.ms)} ms; fidelity Σ layers ÷ step = ${(sum / profile.wholeStep.ms).toFixed(3)}`);
  for (const link of profile.links) console.log(`Link ${link.name}: α ${link.alphaUs} µs, β ${link.bandwidthGBs} GB/s (${link.source})`);
  for (const w of profile.warnings) console.error(`warning: ${w}`);
  return 0;
}

export const profileCommand: CliCommand = { summary: 'time each layer on a local backend and write a profile JSON', run };
