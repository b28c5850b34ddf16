/**
 * `wap config <configFile> [--model <modelFile>] [--fix]`: lints a training
 * config (Accelerate, DeepSpeed, Lightning, Keras MirroredStrategy, torchrun,
 * CUDA_VISIBLE_DEVICES) against the plan for a model, for CI.
 * Exit 0: clean (info notes allowed); 1: errors or warnings remain; 2: bad input.
 */
import type { PlanReport } from '../../protocol/plan';
import { checkConfig, detectConfigFormats, fixAll, initConfigReaders, type ConfigFinding } from '../../configs/index';
import { parseCommandArgs, singlePositional } from '../args';
import { CliError } from '../cliError';
import { readTextFile, writeTextFile } from '../files';
import { PLAN_FLAGS, PLAN_FLAGS_HELP, planForModelFile } from './modelPlan';
import type { CliCommand } from './registry';

const HELP = `Usage: wap config <configFile> [--model <modelFile>] [options]

Checks a training config against the plan WAP makes for the model, and prints
each mismatch as file:line:col: severity: message.

Options:
  --model FILE          the model source to plan (without it only internal consistency is checked)
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

async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('config', HELP, args, { ...PLAN_FLAGS, model: { type: 'string' }, fix: { type: 'boolean' } });
  if (!parsed) return 0;
  const v = parsed.values;
  const file = singlePositional('config', parsed.positionals, 'config file');
  const text = readTextFile(file, 'config file');
  if (detectConfigFormats(file, text).length === 0) {
    throw new CliError(`'${file}' is not a training config WAP reads (Accelerate YAML, DeepSpeed JSON, Lightning Trainer, Keras MirroredStrategy, torchrun or CUDA_VISIBLE_DEVICES in a script or Makefile)`);
  }
  await initConfigReaders();

  let plan: PlanReport | undefined;
  if (v.model !== undefined) {
    const outcome = await planForModelFile(v.model, v);
    if (!outcome.feasible) {
      console.log(`${file}:1:1: error: no plan to compare with: ${outcome.reason} [infeasible-plan]`);
      return 1;
    }
    plan = outcome;
  }

  if (v.fix) {
    const { edits, text: fixed } = fixAll(file, text, plan);
    if (edits.length > 0) {
      writeTextFile(file, fixed);
      console.error(`wap: applied ${edits.length} edit(s) to ${file}`);
    }
    const remaining = checkConfig(file, fixed, plan).findings;
    print(file, fixed, remaining);
    return failing(remaining) > 0 ? 1 : 0;
  }
  const { findings } = checkConfig(file, text, plan);
  print(file, text, findings);
  return failing(findings) > 0 ? 1 : 0;
}

export const configCommand: CliCommand = { summary: 'check a training config against the plan (CI lint; --fix applies the fixes)', run };
