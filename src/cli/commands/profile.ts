/**
 * `wap profile <model-file> [--model NAME] [--input C,H,W] [--backend B] [--batch N]
 *  [--out profile.json] [--cache DIR] [--repetitions N] [--fidelity]`:
 * times every layer in isolated trial workers and writes the versioned profile
 * JSON that `wap plan --profile` reads. Running it from the CLI is the user's
 * explicit consent to start worker processes (trusted).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { analyzeSource } from '../../frontends/index';
import { profileModel, writeProfile } from '../../profiler/index';
import type { BackendId, ProfileFile } from '../../protocol/profile';
import { CliError } from '../cliError';
import { parseShapeFlag } from './analyze';
import type { CliCommand } from './registry';

const BACKENDS = ['auto', 'wasm', 'cpu', 'tfjs-node', 'tfjs-node-gpu', 'torch'] as const;

const HELP = `Usage: wap profile <model-file> [options]

Times each layer's forward and backward pass in isolated worker processes and
writes a profile JSON for 'wap plan --profile'.

Options:
  --model NAME        which model in the file (default: the first)
  --input SHAPE       input shape without batch, e.g. 3,32,32
  --backend B         auto | wasm | cpu | tfjs-node | tfjs-node-gpu | torch (default auto)
  --batch N           batch size (default 8)
  --out FILE          profile to write (default profile.json)
  --cache DIR         trial cache folder (default ~/.cache/wap/profiles)
  --repetitions N     timed repetitions per layer (default 5)
  --fidelity          also time one whole training step and report Σ layers ÷ step`;

const positiveInt = (flag: string, v: string | undefined, d: number): number => {
  if (v === undefined) return d;
  if (!/^[1-9]\d*$/.test(v.trim())) throw new CliError(`${flag} expects a positive integer, got '${v}'`);
  return Number(v);
};

export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'wap', 'profiles');
}

function fmt(ms: number): string {
  return ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

export function profileTable(p: ProfileFile): string[] {
  const dev = new Map(p.devices.map((d) => [d.index, d]));
  const rows = p.layers.map((l) => [
    l.layer,
    fmt(l.forwardMs),
    fmt(l.backwardMs),
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
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        model: { type: 'string' },
        input: { type: 'string' },
        backend: { type: 'string' },
        batch: { type: 'string' },
        out: { type: 'string' },
        cache: { type: 'string' },
        repetitions: { type: 'string' },
        fidelity: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) {
    console.log(HELP);
    return 0;
  }
  const file = parsed.positionals[0];
  if (!file) throw new CliError('profile needs a model file: wap profile <model-file> (see --help)');
  const backend = (v.backend ?? 'auto') as (typeof BACKENDS)[number];
  if (!BACKENDS.includes(backend)) throw new CliError(`--backend must be one of ${BACKENDS.join(', ')}, got '${v.backend}'`);
  const batch = positiveInt('--batch', v.batch, 8);
  const repetitions = positiveInt('--repetitions', v.repetitions, 5);
  const inputShape = v.input ? parseShapeFlag(v.input) : undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const analysis = await analyzeSource(file, text, inputShape ? { inputShape } : {});
  if (analysis.models.length === 0) throw new CliError(`no model found in ${file}`);
  const model = v.model ? analysis.models.find((m) => m.name === v.model) : analysis.models[0];
  if (!model) throw new CliError(`no model named '${v.model}' in ${file}; models: ${analysis.models.map((m) => m.name).join(', ')}`);
  const out = resolve(v.out ?? 'profile.json');
  const interactive = process.stderr.isTTY;
  let profile: ProfileFile;
  try {
    profile = await profileModel(model, {
      backend: backend as BackendId | 'auto',
      batch,
      cacheDir: v.cache ? resolve(v.cache) : defaultCacheDir(),
      repetitions,
      trusted: true,
      wholeStep: !!v.fidelity,
      file,
      onProgress: (e) => {
        const eta = e.etaMs !== undefined ? `, ~${Math.ceil(e.etaMs / 1000)} s left` : '';
        const msg = `profiling layer ${e.done}/${e.total} ${e.layer}${e.cached ? ' (cached)' : ''}${eta}`;
        if (interactive) process.stderr.write(`\r\x1b[K${msg}`);
      },
    });
  } catch (err) {
    if (interactive) process.stderr.write('\r\x1b[K');
    throw new CliError((err as Error).message);
  }
  if (interactive) process.stderr.write('\r\x1b[K');
  writeProfile(out, profile);
  console.log(`Profile of ${model.name} (batch ${batch}) → ${out}`);
  for (const l of profileTable(profile)) console.log(l);
  const sum = profile.layers.filter((l) => l.device === profile.layers[0]?.device).reduce((s, l) => s + l.forwardMs + l.backwardMs, 0);
  const counts = { measured: 0, cached: 0, fallback: 0 };
  for (const l of profile.layers) counts[l.status]++;
  console.log(`Σ layers ${fmt(sum)} ms; ${counts.measured} measured, ${counts.cached} cached, ${counts.fallback} fallback`);
  if (profile.wholeStep) console.log(`Whole training step ${fmt(profile.wholeStep.ms)} ms; fidelity Σ layers ÷ step = ${(sum / profile.wholeStep.ms).toFixed(3)}`);
  for (const link of profile.links) console.log(`Link ${link.name}: α ${link.alphaUs} µs, β ${link.bandwidthGBs} GB/s (${link.source})`);
  for (const w of profile.warnings) console.error(`warning: ${w}`);
  return 0;
}

export const profileCommand: CliCommand = { summary: 'time each layer on a local backend and write a profile JSON', run };
