/**
 * Timing a model's layers from the CLI (`wap profile`, `wap plan --measure`):
 * the profiler flags, progress on stderr, and the text that says which
 * backend and device measured what. Running either command is the user's
 * explicit consent to start trial worker processes (trusted).
 */
import { resolve } from 'node:path';
import type { AnalyzedModel } from '../core/ir';
import { profileModel } from '../profiler/index';
import type { BackendId, ProfileFile } from '../protocol/profile';
import { oneOf, positiveInt } from './args';
import { CliError } from './cliError';

export const BACKENDS = ['auto', 'wasm', 'cpu', 'tfjs-node', 'tfjs-node-gpu', 'torch'] as const;

/** Relative to the current directory, like a build folder; the repository's .gitignore lists it. */
export const DEFAULT_CACHE_DIR = '.wap-cache';

export const PROFILER_FLAGS = {
  backend: { type: 'string' },
  cache: { type: 'string' },
  repetitions: { type: 'string' },
  python: { type: 'string' },
} as const;

export type ProfilerFlagValues = { [K in keyof typeof PROFILER_FLAGS]?: string };

export const PROFILER_FLAGS_HELP = `  --backend B           ${BACKENDS.join(' | ')} (default auto)
  --cache DIR           trial cache folder (default ${DEFAULT_CACHE_DIR}/ in the current directory;
                        git-ignored; delete it to re-measure)
  --repetitions N       timed repetitions per layer (default 5)
  --python PATH         Python interpreter for the torch backend (a venv's or conda
                        environment's python; default $WAP_PYTHON, else python3)`;

export interface MeasureSettings {
  backend: BackendId | 'auto';
  cacheDir: string;
  repetitions: number;
  python?: string;
}

/** Checks the profiler flags before anything is read or spawned. */
export function measureSettingsFrom(v: ProfilerFlagValues): MeasureSettings {
  return {
    backend: oneOf('backend', v.backend, BACKENDS, 'auto'),
    cacheDir: resolve(v.cache ?? DEFAULT_CACHE_DIR),
    repetitions: positiveInt('repetitions', v.repetitions) ?? 5,
    ...(v.python !== undefined ? { python: v.python } : {}),
  };
}

/** profileModel with a one-line progress indicator on an interactive stderr; failures become CliErrors. */
export async function measureModel(model: AnalyzedModel, settings: MeasureSettings, run: { batch: number; file: string; wholeStep?: boolean }): Promise<ProfileFile> {
  const interactive = process.stderr.isTTY;
  const clear = () => interactive && process.stderr.write('\r\x1b[K');
  try {
    return await profileModel(model, {
      ...settings,
      batch: run.batch,
      file: run.file,
      wholeStep: !!run.wholeStep,
      trusted: true,
      onProgress: (e) => {
        if (!interactive) return;
        const eta = e.etaMs !== undefined ? `, ~${Math.ceil(e.etaMs / 1000)} s left` : '';
        process.stderr.write(`\r\x1b[Kprofiling layer ${e.done}/${e.total} ${e.layer}${e.cached ? ' (cached)' : ''}${eta}`);
      },
    });
  } catch (err) {
    throw new CliError((err as Error).message);
  } finally {
    clear();
  }
}

export function fmtMs(ms: number): string {
  return ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

/** 'wasm / CPU (wasm simd)' for each device that measured a layer. */
export function measuredBy(p: ProfileFile): string {
  const used = new Set(p.layers.map((l) => l.device));
  const names = p.devices.filter((d) => used.has(d.index)).map((d) => `${d.backend} / ${d.name}`);
  const list = [...new Set(names)].join(', ') || 'no device';
  return p.python ? `${list} (${describePython(p.python)})` : list;
}

/** 'torch 1.13.0 in /usr/bin/python3': which interpreter measured. */
export function describePython(py: NonNullable<ProfileFile['python']>): string {
  return `torch ${py.torchVersion ?? '?'} in ${py.executable ?? py.interpreter}`;
}

export function statusCounts(p: ProfileFile): Record<'measured' | 'cached' | 'fallback', number> {
  const counts = { measured: 0, cached: 0, fallback: 0 };
  for (const l of p.layers) counts[l.status]++;
  return counts;
}

/** One line for `wap plan --measure`: where the numbers came from. */
export function measuredSummary(p: ProfileFile, batch: number): string {
  const c = statusCounts(p);
  return `measured ${p.layers.length} layers on ${measuredBy(p)} at batch ${batch}: ${c.measured} measured, ${c.cached} cached, ${c.fallback} fallback (analytical)`;
}
