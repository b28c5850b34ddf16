/**
 * `wap plan <file>`: reads a model, plans GPU count and per-layer strategies
 * on a cluster, prints a table (or --json), and optionally writes a Chrome
 * trace and an HTML report. Exit 0 with a plan, 1 when nothing fits, 2 for
 * bad flags or files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Objective, OptimizerKind, PlanOptions, StrategyMode } from '../../protocol/plan';
import type { ProfileFile } from '../../protocol/profile';
import { analyzeSource, sourceKindOf } from '../../frontends/index';
import { ClusterSpecError, CLUSTER_PRESETS, DEFAULT_PRESET, formatPlanTable, planModel, resolveCluster, toChromeTrace } from '../../planner/index';
import { detectLocalGpus } from '../../profiler/index';
import { loadProfile } from '../../profiler/index';
import { CliError } from '../cliError';
import { writeHtmlReport } from '../htmlReport';
import { parseShapeFlag } from './analyze';
import type { CliCommand } from './registry';

const HELP = `Usage: wap plan <file> [options]

Plans how many GPUs to train a model on and which parallelism each layer gets.

Options:
  --model NAME          which model in the file (default: the first)
  --input C,H,W|T       input shape without batch
  --batch B             global batch size (default 128)
  --gpus N              use exactly N GPUs
  --max-gpus N          consider at most N GPUs
  --cluster FILE|PRESET cluster spec file, 'local', or a preset (${Object.keys(CLUSTER_PRESETS).join(', ')}; default ${DEFAULT_PRESET})
  --objective O         throughput (default) | efficiency (smallest n within 5% of the best)
  --strategies S        dp (WAP: data parallel, choose n) | hybrid (default) | all (adds pipelines)
  --optimizer O         sgd | momentum (default) | adam
  --profile FILE        per-layer measured times from 'wap profile'
  --json                print the plan as JSON
  --trace FILE          write a Chrome trace (open in Perfetto)
  --html FILE           write a standalone HTML report`;

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v.trim())) throw new CliError(`--${flag} expects a positive integer, got '${v}'`);
  return Number(v);
}

function oneOf<T extends string>(flag: string, v: string | undefined, allowed: readonly T[], dflt: T): T {
  if (v === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(v)) throw new CliError(`--${flag} must be one of ${allowed.join(', ')}, got '${v}'`);
  return v as T;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${what} '${path}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
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
        batch: { type: 'string' },
        gpus: { type: 'string' },
        'max-gpus': { type: 'string' },
        cluster: { type: 'string' },
        objective: { type: 'string' },
        strategies: { type: 'string' },
        optimizer: { type: 'string' },
        profile: { type: 'string' },
        json: { type: 'boolean' },
        trace: { type: 'string' },
        html: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    console.log(HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError('plan expects exactly one model file (see wap plan --help)');
  const file = positionals[0];
  if (!sourceKindOf(file)) throw new CliError(`'${file}' is not a .py, .ts/.js or .json model file`);
  const options: PlanOptions = {
    batch: positiveInt('batch', v.batch) ?? 128,
    objective: oneOf<Objective>('objective', v.objective, ['throughput', 'efficiency'], 'throughput'),
    strategies: oneOf<StrategyMode>('strategies', v.strategies, ['dp', 'hybrid', 'all'], 'hybrid'),
    optimizer: oneOf<OptimizerKind>('optimizer', v.optimizer, ['sgd', 'momentum', 'adam'], 'momentum'),
  };
  const gpus = positiveInt('gpus', v.gpus);
  if (gpus !== undefined) options.gpus = gpus;
  const maxGpus = positiveInt('max-gpus', v['max-gpus']);
  if (maxGpus !== undefined) options.maxGpus = maxGpus;
  const inputShape = v.input !== undefined ? parseShapeFlag(v.input) : undefined;

  let cluster;
  try {
    const localGpus = v.cluster === 'local' ? await detectLocalGpus() : undefined;
    cluster = resolveCluster(v.cluster, { localGpus, readFile: (p) => readFileSync(p, 'utf8') });
  } catch (err) {
    if (err instanceof ClusterSpecError) throw new CliError(`cluster: ${err.message}`);
    throw err;
  }
  let profile: ProfileFile | undefined;
  if (v.profile !== undefined) {
    try {
      profile = loadProfile(readText(v.profile, 'profile'));
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`profile '${v.profile}': ${(err as Error).message}`);
    }
  }

  const text = readText(file, 'model file');
  const result = await analyzeSource(file, text, inputShape ? { inputShape } : {});
  if (result.models.length === 0) {
    const why = result.diagnostics.find((d) => d.severity === 'error');
    throw new CliError(`no model found in '${file}'${why ? `: line ${why.line}: ${why.message}` : ''}`);
  }
  const model = v.model !== undefined ? result.models.find((m) => m.name === v.model) : result.models[0];
  if (!model) throw new CliError(`no model named '${v.model}' in '${file}' (found: ${result.models.map((m) => m.name).join(', ')})`);

  const outcome = planModel(model, cluster, options, { profile });
  if (outcome.feasible) {
    outcome.file = file;
    if (v.trace !== undefined) writeOut(v.trace, JSON.stringify(toChromeTrace(outcome)));
  }
  if (v.html !== undefined) {
    try {
      writeHtmlReport(outcome, v.html);
    } catch (err) {
      throw new CliError(`cannot write '${v.html}': ${(err as Error).message}`);
    }
  }
  if (v.json) console.log(JSON.stringify(outcome, null, 2));
  else console.log(formatPlanTable(outcome));
  if (!outcome.feasible) {
    if (v.json) console.error(`wap: ${outcome.reason}`);
    return 1;
  }
  return 0;
}

function writeOut(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (err) {
    throw new CliError(`cannot write '${path}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export const planCommand: CliCommand = { summary: 'plan GPU count and per-layer parallelism on a cluster', run };
