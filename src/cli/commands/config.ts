/**
 * `wap config <configFile> [--model <modelFile>] [--fix]`: lints a training
 * config (Accelerate, DeepSpeed, Lightning, Keras MirroredStrategy, torchrun,
 * CUDA_VISIBLE_DEVICES) against the plan for a model, for CI.
 * Exit 0: clean (info notes allowed); 1: errors or warnings remain; 2: bad input.
 */
import { basename, resolve } from 'node:path';
import type { PlanOutcome, PlanReport } from '../../protocol/plan';
import { checkConfig, comparedSetup, detectConfigFormats, fixAll, initConfigReaders, namedModel, pinnedOptions, readConfigSetups, statedBatch, statedSequence, resolveLaunchedModel, launchArgumentsOfModel, planMachines, withLaunchScriptWorld, summarizeRun, versusLine, weighedByVersus, withStatedPrecision, withStatedFramework, type ConfigFinding, type StatedSetup, type ModelTarget, type RunSummary, type FileAccess } from '../../configs/index';
import { parseCommandArgs, singlePositional } from '../args';
import { CliError } from '../cliError';
import { diskFiles, readTextFile, writeTextFile } from '../files';
import { namedModelNotFound } from '../../frontends/huggingface/sources';
import { analyzeModelFile } from '../modelLoading';
import { PLAN_FLAGS, PLAN_FLAGS_HELP, planForModelFile, type PlanFlagValues } from './modelPlan';
import type { CliCommand } from './registry';

const HELP = `Usage: wap config <configFile> [--model <modelFile>] [options]

Checks a training config against the plan WAP makes for the model, and prints
each mismatch as file:line:col: severity: message; then plans the model with
the config's own setup pinned and prints it beside the best plan:
"your config: 3.4 s/step, 41% MFU, fits (62 GB/GPU) · best plan: 2.1 s/step (1.6×), ZeRO-2 + bf16 + TP 2".

Options:
  --model FILE          the model source to plan (default: the model of the script the config
                        launches, e.g. train.py in 'accelerate launch train.py'; without one
                        only internal consistency is checked)
  --json                print findings and "your config vs best plan" as JSON
${PLAN_FLAGS_HELP}
  --fix                 apply every quick-fix to the config file in place

Exit status: 0 clean, 1 errors or warnings found, 2 bad input.`;

/** 1-based line and column (UTF-16 units) of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function print(file: string, text: string, findings: ConfigFinding[]): void {
  for (const f of findings) {
    const { line, column } = lineColumn(text, f.range.start);
    console.log(`${file}:${line}:${column}: ${f.severity}: ${f.message} [${f.code}]`);
  }
}

const failing = (findings: ConfigFinding[]): number => findings.filter((f) => f.severity !== 'info').length;

const fileAccess: FileAccess = diskFiles;

/**
 * The class the launched script builds, when the model file reads it as a model of that name. A file that builds an
 * instance of it (`model = GPT(GPTConfig())`) reads that instance instead: its first model is then the one, as the
 * editor picks it, where passing the class name on would fail with "no model named 'GPT'".
 */
async function launchedModelName(target: ModelTarget | undefined, v: { input?: string; 'seq-len'?: string; python?: string; 'script-args'?: string }): Promise<string | undefined> {
  if (!target?.modelName) return undefined;
  const found = await analyzeModelFile(target.file, { input: v.input, 'seq-len': v['seq-len'], python: v.python, 'script-args': v['script-args'] }).catch(() => undefined);
  return !found || found.models.some((m) => m.name === target.modelName) ? target.modelName : undefined;
}

interface Versus {
  yours: RunSummary;
  best: RunSummary;
  line: string;
  /** Which format's setup was pinned. */
  from: string;
}

/** Plans the model again with the config's stated setup pinned; undefined when the config states none. */
async function versusBest(file: string, setup: StatedSetup | undefined, model: string, v: Parameters<typeof planForModelFile>[1], best: PlanOutcome): Promise<Versus | undefined> {
  if (!setup) return undefined;
  const yoursOutcome = await planForModelFile(model, v, (o) => pinnedOptions(o, setup, basename(file)));
  const yours = summarizeRun(yoursOutcome);
  const bestSummary = summarizeRun(best);
  return { yours, best: bestSummary, line: versusLine(yours, bestSummary, setup), from: setup.label };
}

async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('config', HELP, args, { ...PLAN_FLAGS, model: { type: 'string' }, fix: { type: 'boolean' }, json: { type: 'boolean' } });
  if (!parsed) return 0;
  const v = parsed.values;
  const file = singlePositional('config', parsed.positionals, 'config file');
  const text = readTextFile(file, 'config file');
  if (detectConfigFormats(file, text).length === 0) {
    throw new CliError(`'${file}' is not a training config WAP reads (Accelerate YAML, DeepSpeed JSON, Lightning Trainer, Keras MirroredStrategy, torchrun, deepspeed or CUDA_VISIBLE_DEVICES in a script or Makefile)`);
  }
  await initConfigReaders();

  let plan: PlanReport | undefined;
  // The model: --model, else the one the script this config launches builds; never a guess.
  const target: ModelTarget | undefined = v.model !== undefined ? { file: v.model, how: '--model' } : resolveLaunchedModel(file, text, fileAccess);
  const flags = { ...v, 'model-name': v['model-name'] ?? (v.model === undefined ? await launchedModelName(target, v) : undefined) };
  const setups = readConfigSetups(file, text, fileAccess);
  // Compare at the batch the config trains with, unless --batch says otherwise: a fair "your config vs best".
  const configBatch = setups.map(statedBatch).find((b) => b !== undefined);
  if (flags.batch === undefined && configBatch !== undefined) flags.batch = String(configBatch);
  // And at the tokens per sample it trains on (cutoff_len, max_seq_length…), unless --seq-len says otherwise.
  const sequence = statedSequence(setups, basename(file));
  const planFlags: PlanFlagValues = flags['seq-len'] === undefined && sequence ? { ...flags, 'seq-len': String(sequence.tokens), sequenceSource: sequence.source } : flags;
  let versus: Versus | undefined;
  if (target) {
    // The model is read with the arguments of the launch that runs it here, not those every launch of it shares.
    const launch = launchArgumentsOfModel(resolve(file), text, { file: resolve(target.file), ...(target.launch ? { launch: resolve(target.launch) } : {}) }, fileAccess);
    if (launch && planFlags['script-args'] === undefined) planFlags.launchArguments = { words: launch.words, source: launch.source };
    const importRoot = launch?.importRoot ?? target.importRoot;
    if (importRoot) planFlags.importRoot = importRoot;
    const readWith = launch && planFlags['script-args'] === undefined ? `; read with ${launch.said}` : '';
    if (!v.json) console.error(`wap: comparing with the model in ${target.file}${flags['model-name'] ? ` (${flags['model-name']})` : ''}, found by ${target.how}${readWith}${v.model === undefined ? '; pass --model FILE to choose another' : ''}`);
    if (!v.json && planFlags.sequenceSource) console.error(`wap: at ${planFlags['seq-len']} tokens per sample, ${planFlags.sequenceSource} (--seq-len reads it at another length)`);
    // The best plan trains in the precision this config states, unless --precision says otherwise, on its framework.
    const stated = setups.find((s) => s.precision);
    const framework = setups.find((s) => s.weightGather || s.serialSync);
    const outcome = await planForModelFile(target.file, planFlags, (o) => {
      const inPrecision = stated ? withStatedPrecision(o, stated, basename(file), true) : o;
      return framework ? withStatedFramework(inPrecision, framework, basename(file), true) : inPrecision;
    });
    // The process count of the launch that runs the model (this launch script, or the one that passes this config),
    // on the plan's machines where it starts one process per GPU of each.
    const launchFile = target.launch ?? file;
    const launchText = launchFile === file ? text : fileAccess.read(launchFile) ?? '';
    const launched = withLaunchScriptWorld(setups[0] ?? comparedSetup(file, text, fileAccess), launchFile, launchText, target.file, fileAccess, planMachines(outcome.cluster));
    if (!v.json && launched.note) console.error(`wap: ${launched.note}`);
    versus = await versusBest(file, launched.setup, target.file, planFlags, outcome);
    if (!outcome.feasible) {
      if (v.json) console.log(JSON.stringify({ file, model: target, findings: [], best: summarizeRun(outcome), yours: versus?.yours }, null, 2));
      else console.log(`${file}:1:1: error: no plan to compare with: ${outcome.reason} [infeasible-plan]`);
      return 1;
    }
    plan = outcome;
  } else if (!v.json) {
    const named = namedModel(file, text);
    console.error(`wap: no model for ${file}: ${named ? namedModelNotFound(named, file) : 'no launch script names it'}; pass --model FILE (only the config's own consistency is checked)`);
  }

  if (v.fix) {
    const { edits, text: fixed } = fixAll(file, text, plan, undefined, fileAccess);
    if (edits.length > 0) {
      writeTextFile(file, fixed);
      console.error(`wap: applied ${edits.length} edit(s) to ${file}`);
    }
    const remaining = checkConfig(file, fixed, plan, undefined, fileAccess).findings;
    print(file, fixed, remaining);
    return failing(remaining) > 0 ? 1 : 0;
  }
  const checked = checkConfig(file, text, plan, undefined, fileAccess);
  const { formats } = checked;
  const findings = versus ? weighedByVersus(checked.findings, versus.yours, versus.best) : checked.findings;
  if (v.json) {
    console.log(JSON.stringify({
      file, formats, model: target,
      findings: findings.map((f) => ({ ...lineColumn(text, f.range.start), severity: f.severity, code: f.code, message: f.message, fix: f.fix?.title })),
      yours: versus?.yours, best: versus?.best, versus: versus?.line,
    }, null, 2));
    return failing(findings) > 0 ? 1 : 0;
  }
  print(file, text, findings);
  if (versus) {
    console.log(`${file}: ${versus.line}`);
    for (const w of new Set(versus.yours.warnings)) console.log(`${file}: note (your config's plan): ${w}`);
  }
  return failing(findings) > 0 ? 1 : 0;
}

export const configCommand: CliCommand = { summary: 'check a training config against the plan (CI lint; --fix applies the fixes)', run };
