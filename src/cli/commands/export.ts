/**
 * `wap export <modelFile> --format F [--out FILE]`: writes the plan in a form a
 * distributed engine reads (DeepSpeed, Accelerate, torchrun, hostfile,
 * Horovod) or runnable PyTorch parallelize() code. Prints to stdout unless --out.
 */
import { EXPORT_FORMATS, exportPlan, RENAMED_FORMATS, type ExportFormat } from '../../configs/index';
import { parseCommandArgs, singlePositional } from '../args';
import { CliError } from '../cliError';
import { writeTextFile } from '../files';
import { PLAN_FLAGS, PLAN_FLAGS_HELP, planForModelFile } from './modelPlan';
import type { CliCommand } from './registry';

const HELP = `Usage: wap export <modelFile> --format ${EXPORT_FORMATS.join('|')} [--out FILE] [options]

Plans the model and writes the plan for a distributed engine:
  deepspeed   DeepSpeed config JSON (train_batch_size = micro × accumulation × world)
  accelerate  HF Accelerate config YAML
  torchrun    torchrun launch script (multi-machine: --nnodes with c10d rendezvous)
  hostfile    DeepSpeed hostfile with the launch line
  horovod     horovodrun -np N -H host:slots,… script
  torch-parallelize  PyTorch (torch >= 2.4) parallelize(model): DeviceMesh, ColwiseParallel /
              RowwiseParallel by the model's module names, fully_shard (FSDP2), checkpointing
              ('placement' is its old name and still accepted)

Options:
  --format F            one of the above (required)
  --out FILE            write there instead of stdout
${PLAN_FLAGS_HELP}`;

async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('export', HELP, args, { ...PLAN_FLAGS, format: { type: 'string' }, out: { type: 'string' } });
  if (!parsed) return 0;
  const v = parsed.values;
  const modelFile = singlePositional('export', parsed.positionals, 'model file');
  const format = v.format;
  if (format && RENAMED_FORMATS[format]) console.error(`wap: --format ${format} was renamed ${RENAMED_FORMATS[format]}`);
  if (!format || !((EXPORT_FORMATS as readonly string[]).includes(format) || RENAMED_FORMATS[format])) {
    throw new CliError(`--format must be one of ${EXPORT_FORMATS.join(', ')}${format ? `, got '${format}'` : ''}`);
  }
  const outcome = await planForModelFile(modelFile, v);
  if (!outcome.feasible) {
    console.error(`wap: nothing to export: ${outcome.reason}`);
    return 1;
  }
  const file = exportPlan(outcome, format as ExportFormat);
  if (v.out !== undefined) {
    writeTextFile(v.out, file.content);
  } else process.stdout.write(file.content);
  console.error(`wap: ${file.description}`);
  return 0;
}

export const exportCommand: CliCommand = { summary: 'export the plan as a DeepSpeed/Accelerate config, launch script or runnable PyTorch parallelize() code', run };
