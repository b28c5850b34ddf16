/**
 * `wap plan <file>`: reads a model, plans GPU count and per-layer strategies
 * on a cluster, prints a table (or --json), and optionally writes a Chrome
 * trace and an HTML report. Layer costs come from the analytical model, a
 * profile file (--profile), or trials run first in the same call (--measure).
 * Exit 0 with a plan, 1 when nothing fits, 2 for bad flags or files.
 */
import { formatPlanTable, planModel, toChromeTrace } from '../../planner/index';
import { loadProfile } from '../../profiler/index';
import type { ProfileFile } from '../../protocol/profile';
import { parseCommandArgs, singlePositional } from '../args';
import { CliError } from '../cliError';
import { readTextFile, writeTextFile, writingTo } from '../files';
import { writeHtmlReport } from '../htmlReport';
import { measuredSummary, measureModel, measureSettingsFrom, PROFILER_FLAGS, PROFILER_FLAGS_HELP, type MeasureSettings } from '../measure';
import { addLengthMix, LENGTH_MIX_FLAGS, LENGTH_MIX_HELP, lengthMixRequestFrom } from '../lengthMixFlags';
import { loadModel } from '../modelLoading';
import { clusterFrom, PLANNER_FLAGS, plannerFlagsHelp, planOptionsFrom, withTrainingHints } from '../planFlags';
import type { CliCommand } from './registry';

/**
 * Trials run at most this batch: layer time is close to linear in batch beyond
 * a few dozen samples, the planner scales a one-batch profile proportionally,
 * and a full global batch (often hundreds) would make the trials slow.
 */
export const MAX_TRIAL_BATCH = 32;

const HELP = `Usage: wap plan <file> [options]

Plans how many GPUs to train a model on and which parallelism each layer gets.

Options:
${plannerFlagsHelp('--model NAME')}
  --profile FILE        per-layer measured times from 'wap profile'
  --measure             time the layers here first (as 'wap profile' does, at batch
                        min(B, ${MAX_TRIAL_BATCH})) and plan with those times; with:
${PROFILER_FLAGS_HELP.replace(/^ {2}/gm, '    ')}
${LENGTH_MIX_HELP}
  --json                print the plan as JSON
  --trace FILE          write a Chrome trace (open in Perfetto)
  --html FILE           write a standalone HTML report

The 'source' column says where each layer's times came from (analytical or measured).`;

/** Where the layer times come from: --profile, --measure, or neither (analytical). */
type CostInput = { kind: 'analytical' } | { kind: 'file'; path: string } | { kind: 'measure'; settings: MeasureSettings };

function costInputFrom(v: { profile?: string; measure?: boolean; backend?: string; cache?: string; repetitions?: string }): CostInput {
  if (v.measure && v.profile !== undefined) throw new CliError('--measure and --profile both supply layer times; use one');
  if (v.measure) return { kind: 'measure', settings: measureSettingsFrom(v) };
  const stray = (['backend', 'cache', 'repetitions'] as const).find((f) => v[f] !== undefined);
  if (stray) throw new CliError(`--${stray} applies only with --measure`);
  return v.profile !== undefined ? { kind: 'file', path: v.profile } : { kind: 'analytical' };
}

function readProfileFile(path: string): ProfileFile {
  const text = readTextFile(path, 'profile');
  try {
    return loadProfile(text);
  } catch (err) {
    throw new CliError(`profile '${path}': ${(err as Error).message}`);
  }
}

async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('plan', HELP, args, {
    ...PLANNER_FLAGS,
    ...PROFILER_FLAGS,
    ...LENGTH_MIX_FLAGS,
    model: { type: 'string' },
    profile: { type: 'string' },
    measure: { type: 'boolean' },
    json: { type: 'boolean' },
    trace: { type: 'string' },
    html: { type: 'string' },
  });
  if (!parsed) return 0;
  const v = parsed.values;
  const file = singlePositional('plan', parsed.positionals, 'model file');
  // Every flag is checked before anything slow (nvidia-smi, parsing, trials) starts.
  const options = planOptionsFrom(v);
  const costs = costInputFrom(v);
  const lengths = lengthMixRequestFrom(v);
  const cluster = await clusterFrom(v.cluster);
  let profile = costs.kind === 'file' ? readProfileFile(costs.path) : undefined;
  const model = await loadModel(file, { input: v.input, 'seq-len': v['seq-len'], python: v.python, 'script-args': v['script-args'], modelName: v.model });
  if (costs.kind === 'measure') {
    const trialBatch = Math.min(options.batch, MAX_TRIAL_BATCH);
    profile = await measureModel(model, costs.settings, { batch: trialBatch, file });
    // Under --json stdout carries only the JSON.
    (v.json ? console.error : console.log)(`${v.json ? 'wap: ' : ''}${measuredSummary(profile, trialBatch)}`);
    for (const w of profile.warnings) console.error(`warning: ${w}`);
  }

  const hinted = await withTrainingHints(options, file);
  const outcome = planModel(model, cluster, hinted, { profile });
  if (outcome.feasible) {
    outcome.file = file;
    if (lengths) {
      const modelFlags = { python: v.python, modelName: v.model };
      await addLengthMix(outcome, lengths, hinted, async (tokens, pinned) => planModel(await loadModel(file, { ...modelFlags, 'seq-len': String(tokens) }), cluster, pinned));
    }
    if (v.trace !== undefined) writeTextFile(v.trace, JSON.stringify(toChromeTrace(outcome)));
  }
  if (v.html !== undefined) writingTo(v.html, () => writeHtmlReport(outcome, v.html!));
  if (v.json) console.log(JSON.stringify(outcome, null, 2));
  else console.log(formatPlanTable(outcome));
  if (!outcome.feasible) {
    if (v.json) console.error(`wap: ${outcome.reason}`);
    return 1;
  }
  return 0;
}

export const planCommand: CliCommand = { summary: 'plan GPU count and per-layer parallelism on a cluster (--measure: time the layers first)', run };
