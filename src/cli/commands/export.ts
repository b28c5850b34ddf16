/**
 * `wap export <modelFile> --format F [--out FILE]`: writes the plan in a form a
 * distributed engine reads (DeepSpeed, Accelerate, torchrun, hostfile,
 * Horovod) or a device-placement preview. Prints to stdout unless --out.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { EXPORT_FORMATS, exportPlan, type ExportFormat } from '../../configs/index';
import { CliError } from '../cliError';
import { PLAN_FLAGS, PLAN_FLAGS_HELP, planForModelFile } from './modelPlan';
import type { CliCommand } from './registry';

const HELP = `Usage: wap export <modelFile> --format ${EXPORT_FORMATS.join('|')} [--out FILE] [options]

Plans the model and writes the plan for a distributed engine:
  deepspeed   DeepSpeed config JSON (train_batch_size = micro × accumulation × world)
  accelerate  HF Accelerate config YAML
  torchrun    torchrun launch script (multi-machine: --nnodes with c10d rendezvous)
  hostfile    DeepSpeed hostfile with the launch line
  horovod     horovodrun -np N -H host:slots,… script
  placement   PyTorch device-placement preview for model-parallel layers (read it; WAP never applies it)

Options:
  --format F            one of the above (required)
  --out FILE            write there instead of stdout
${PLAN_FLAGS_HELP}`;

async function run(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { ...PLAN_FLAGS, format: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    console.log(HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError('export expects exactly one model file (see wap export --help)');
  const format = v.format;
  if (!format || !(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new CliError(`--format must be one of ${EXPORT_FORMATS.join(', ')}${format ? `, got '${format}'` : ''}`);
  }
  const outcome = await planForModelFile(positionals[0]!, v);
  if (!outcome.feasible) {
    console.error(`wap: nothing to export: ${outcome.reason}`);
    return 1;
  }
  const file = exportPlan(outcome, format as ExportFormat);
  if (v.out !== undefined) {
    try {
      writeFileSync(v.out, file.content);
    } catch (err) {
      throw new CliError(`cannot write '${v.out}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  } else process.stdout.write(file.content);
  console.error(`wap: ${file.description}`);
  return 0;
}

export const exportCommand: CliCommand = { summary: 'export the plan as a DeepSpeed/Accelerate config, launch script or placement preview', run };
