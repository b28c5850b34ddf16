/**
 * What the launches and training configs that train the model state about the run, for the model's own plan: the
 * global batch and the precision. `torchrun --nproc_per_node 8 run_clm.py --per_device_train_batch_size 4 --bf16`
 * trains on 32 samples a step in bf16, a DeepSpeed JSON's train_batch_size on its own number. WAP's first question
 * (how many GPUs) is asked for a fixed global batch, so planning at a default of 128 answers it for a run the user
 * does not make; and the editor's config check, which compares "your config" at the model plan's batch, did too.
 *
 * A config counts when the model it trains is this file, found as `wap config` finds it (modelFor.ts): the launch
 * scripts and configs in the model's folder, the model's own script (a Trainer configured in code), and launch
 * scripts one folder up (the project root's run.sh launches `src/train.py`). Configs that state different values are named, not chosen between. The precision applies only
 * where the other hints found none (precisionHint.ts reads the code and the configs beside the model first).
 */
import type { AmpStyle, Precision } from '../protocol/plan';
import { detectConfigFormats, MAX_CONFIG_CHARS } from './check';
import { readConfigSetups } from './evaluate';
import { baseOf, dirOf, joinPath, normalisePath } from './filePaths';
import { isLaunchScriptName } from './launchScripts';
import { launchesOf } from './launchedBy';
import { wrappedByFramework } from './torchNames';
import { resolveLaunchedModel } from './modelFor';
import { statedDataParallel, statedGlobalBatch, type StatedSetup } from './setup';
import type { FileAccess } from './types';

export interface BatchHint {
  batch: number;
  /** The config or launch script that states it. */
  file: string;
  /** Who states it and how, for the report: "run.sh's Hugging Face Trainer command line: micro-batch 4 × data-parallel 8". */
  source: string;
}

export type BatchReading = BatchHint | { disagree: BatchHint[] } | undefined;

export interface LaunchedSetupHint {
  batch: BatchReading;
  /** The data-parallel replicas the launches start, where they agree (`torchrun --nproc_per_node 8`: 8). */
  replicas?: { count: number; source: string };
  precision?: { precision: Precision; source: string; ampStyle?: { value: AmpStyle; source: string } };
  /** Launches that state different precisions, named: the plan keeps the default and says why (PlanOptions.precisionUnsettled). */
  precisionUnsettled?: string;
}

/** Files read at most, as the other hints read at most 64 beside the model. */
const MAX_CANDIDATES = 64;

/** The setup's global batch (as pinnedOptions plans "your config" at it) and how it is made up, for the report. */
function batchWithHow(setup: StatedSetup): { batch: number; how: string } | undefined {
  if (setup.globalBatch) return { batch: setup.globalBatch.value, how: `global batch ${setup.globalBatch.value}` };
  const dp = statedDataParallel(setup);
  const batch = statedGlobalBatch(setup, dp);
  if (batch === undefined || !setup.microBatch || dp === undefined) return undefined;
  const accumulation = setup.gradientAccumulation?.value ?? 1;
  const replicas = setup.dataParallel ? `data-parallel ${dp}` : `${dp} GPU${dp === 1 ? '' : 's'}${setup.worldFrom ? ` (${setup.worldFrom})` : ''}`;
  return { batch, how: `micro-batch ${setup.microBatch.value}${accumulation > 1 ? ` × ${accumulation} accumulation steps` : ''} × ${replicas}` };
}

/** Names worth reading: launch scripts, configs and scripts; never a checkpoint or a dataset beside them. */
const mayConfigure = (name: string): boolean => isLaunchScriptName(name, '') || /\.(py|ya?ml|jsonc?|toml|cfg)$/i.test(name) || !/\.[^./\\]+$/.test(name);

/** Config files that may train the model: its folder's configs and launch scripts, and launch scripts one folder up. */
function candidates(modelPath: string, files: FileAccess): string[] {
  const dir = dirOf(modelPath);
  const up = dirOf(dir);
  const here = files.list(dir).filter(mayConfigure).sort().map((name) => joinPath(dir, name));
  const above = up !== dir && up !== '' ? files.list(up).filter((name) => isLaunchScriptName(name, '')).sort().map((name) => joinPath(up, name)) : [];
  return [...here, ...above].slice(0, MAX_CANDIDATES);
}

/** The setups of the configs that train `modelPath`, each with the config's path. */
function setupsTraining(modelPath: string, files: FileAccess): Array<{ path: string; setup: StatedSetup }> {
  const target = normalisePath(modelPath);
  const out: Array<{ path: string; setup: StatedSetup }> = [];
  for (const path of candidates(modelPath, files)) {
    const text = files.read(path);
    if (text === undefined || text.length > MAX_CONFIG_CHARS || detectConfigFormats(path, text).length === 0) continue;
    try {
      // The model file's own Trainer trains what the file trains (a LightningModule wrapping an imported network).
      const trains = normalisePath(path) === target ? { file: path } : resolveLaunchedModel(path, text, files);
      if (!trains || normalisePath(trains.file) !== target) continue;
      for (const setup of readConfigSetups(path, text, files)) out.push({ path, setup });
    } catch {
      // A config WAP cannot read says nothing about the run here; its own check says why.
    }
  }
  return out;
}

/** What the configs that train `modelPath` state: one batch, or the ones that disagree; one precision, if they agree. */
export function launchedSetupHint(modelPath: string, files: FileAccess): LaunchedSetupHint {
  const batches = new Map<number, BatchHint>();
  const precisions = new Map<Precision, NonNullable<LaunchedSetupHint['precision']> & { file: string }>();
  const replicas = new Map<number, string>();
  for (const { path, setup } of setupsTraining(modelPath, files)) {
    const file = baseOf(path);
    const dp = statedDataParallel(setup);
    if (dp !== undefined && !replicas.has(dp)) replicas.set(dp, setup.worldFrom ? `as ${setup.worldFrom} launches ${file}` : `${file}'s ${setup.label}`);
    const b = batchWithHow(setup);
    if (b && !batches.has(b.batch)) batches.set(b.batch, { batch: b.batch, file, source: `${file}'s ${setup.label}: ${b.how}` });
    const p = setup.precision;
    const style = setup.ampStyle && { value: setup.ampStyle.value, source: `${file} (${setup.ampStyle.why})` };
    if (p?.stated && !precisions.has(p.value)) precisions.set(p.value, { precision: p.value, file, source: `${file} (${setup.label})`, ...(style ? { ampStyle: style } : {}) });
  }
  // No setup states the replicas (a launch of an accelerate loop with arguments of its own): the launches' process
  // count does, for a script whose framework replicates its model (accelerate, Fabric, DeepSpeed's engine); a script
  // that wraps nothing starts independent processes, not replicas of one model.
  const script = replicas.size === 0 ? files.read(modelPath) : undefined;
  if (script !== undefined && wrappedByFramework(script)) {
    const launches = launchesOf(modelPath, files);
    const worlds = new Set(launches.map((l) => l.world));
    const [world] = worlds;
    if (worlds.size === 1 && world !== undefined) replicas.set(world, `as ${launches[0]!.launcher} launches ${baseOf(modelPath)}`);
  }
  const hints = [...batches.values()];
  const batch: BatchReading = hints.length === 0 ? undefined : hints.length === 1 ? hints[0] : { disagree: hints };
  const [stated] = precisions.size === 1 ? [...precisions.values()] : [];
  let precision: LaunchedSetupHint['precision'];
  if (stated) {
    const { file: _file, ...hint } = stated;
    precision = hint;
  }
  const unsettled = precisions.size > 1 ? [...precisions.values()].map((p) => `${p.file} ${p.precision}`).join(', ') : undefined;
  const [count] = replicas.size === 1 ? [...replicas.keys()] : [];
  return {
    batch,
    ...(precision ? { precision } : {}),
    ...(unsettled ? { precisionUnsettled: `the launches that train the model state different precisions (${unsettled}): pass --precision for the run you mean` } : {}),
    ...(count !== undefined ? { replicas: { count, source: replicas.get(count)! } } : {}),
  };
}

interface HintedOptions {
  batch: number;
  launchReplicas?: { count: number; source: string };
  batchSource?: string;
  batchAssumed?: boolean;
  precision?: Precision;
  precisionSource?: string;
  precisionUnsettled?: string;
  ampStyle?: AmpStyle;
  ampStyleSource?: string;
}

/**
 * The options with what the launch states, where nothing explicit (a flag, a setting, another hint) chose: its
 * batch, and its precision. Launches that disagree on the batch are named in the report and the default stays
 * (which of them is the run is the user's to say).
 */
export function withLaunchedSetup<T extends HintedOptions>(options: T, hint: LaunchedSetupHint | undefined): T {
  if (!hint) return options;
  let out = options;
  const p = hint.precision;
  if (!out.precision && !p && hint.precisionUnsettled) out = { ...out, precisionUnsettled: hint.precisionUnsettled };
  if (!out.precision && p) {
    out = { ...out, precision: p.precision, precisionSource: p.source };
    if (!out.ampStyle && p.ampStyle) out = { ...out, ampStyle: p.ampStyle.value, ampStyleSource: p.ampStyle.source };
  }
  if (hint.replicas && !out.launchReplicas) out = { ...out, launchReplicas: hint.replicas };
  const reading = hint.batch;
  if (!out.batchAssumed || !reading) return out;
  if ('disagree' in reading) {
    const said = reading.disagree.map((h) => `${h.file} ${h.batch}`).join(', ');
    return { ...out, batchSource: `the launches that train the model state different global batches (${said})` };
  }
  const stated: T = { ...out, batch: reading.batch, batchSource: reading.source };
  delete stated.batchAssumed;
  return stated;
}
