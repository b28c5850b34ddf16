/**
 * `wap validate <model-file> --devices cpu:N|cuda:0,1,… [--batch N] [--input SHAPE]
 *  [--python PATH] [--optimizer O] [--steps N] [--save-profile FILE] [--json]`:
 * runs a few real data-parallel training steps with torchrun and prints the
 * plan's predicted step next to the measured one, per phase.
 */
import { resolve } from 'node:path';
import { writeProfile } from '../../profiler/index';
import type { OptimizerKind } from '../../protocol/plan';
import type { ValidationReport } from '../../protocol/validate';
import { validatePlan } from '../../validate/validatePlan';
import { oneOf, parseCommandArgs, positiveInt, singlePositional } from '../args';
import { CliError } from '../cliError';
import { writingTo } from '../files';
import { DEFAULT_CACHE_DIR, fmtMs } from '../measure';
import { loadModel } from '../modelLoading';
import type { CliCommand } from './registry';

const HELP = `Usage: wap validate <model-file> --devices cpu:N|cuda:I,J,… [options]

Measures the plan for real: builds the analysed model in PyTorch from WAP's
layer specs (never by running your code), runs a few data-parallel training
steps with torchrun on local devices (gloo over N CPU processes, or NCCL over
the listed GPUs), and prints the predicted and measured time per phase.

Options:
  --devices D           cpu:N or cuda:0,1,… (required)
  --model NAME          which model in the file (default: the first)
  --input SHAPE         input shape without batch, e.g. 3,64,64
  --batch N             global batch over all processes (default 8)
  --python PATH         interpreter with torch (default $WAP_PYTHON, else python3)
  --optimizer O         sgd | momentum | adam (default sgd)
  --steps N             timed steps after 2 warm-up steps (default 5)
  --timeout S           kill everything after S seconds (default 600)
  --cache DIR           trial cache folder (default ${DEFAULT_CACHE_DIR}/)
  --save-profile FILE   keep the measurement as a profile for 'wap plan --profile'
  --json                { predictedStepMs, measuredStepMs, ratio, phases, devices, torchVersion, … }`;

export function validationTable(r: ValidationReport): string[] {
  const rows = r.phases.map((p) => [p.label, fmtMs(p.predictedMs), fmtMs(p.measuredMs), p.ratio.toFixed(2)]);
  const header = ['Phase', 'Predicted ms', 'Measured ms', 'Pred/meas'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('validate', HELP, args, {
    devices: { type: 'string' },
    model: { type: 'string' },
    input: { type: 'string' },
    batch: { type: 'string' },
    python: { type: 'string' },
    optimizer: { type: 'string' },
    steps: { type: 'string' },
    timeout: { type: 'string' },
    cache: { type: 'string' },
    'save-profile': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!parsed) return 0;
  const v = parsed.values;
  const file = singlePositional('validate', parsed.positionals, 'model file');
  if (!v.devices) throw new CliError('validate needs --devices cpu:N or cuda:I,J,… (see wap validate --help)');
  const batch = positiveInt('batch', v.batch) ?? 8;
  const steps = positiveInt('steps', v.steps) ?? 5;
  const timeoutS = positiveInt('timeout', v.timeout) ?? 600;
  const optimizer = oneOf<OptimizerKind>('optimizer', v.optimizer, ['sgd', 'momentum', 'adam'], 'sgd');
  const model = await loadModel(file, { input: v.input, modelName: v.model });
  let result;
  try {
    result = await validatePlan(model, {
      devices: v.devices,
      batch,
      python: v.python,
      optimizer,
      steps,
      timeoutMs: timeoutS * 1000,
      cacheDir: resolve(v.cache ?? DEFAULT_CACHE_DIR),
      trusted: true,
      file,
      onStage: (s) => console.error(`wap: ${s}`),
    });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const { report, profile } = result;
  if (v['save-profile']) {
    const out = resolve(v['save-profile']);
    writingTo(out, () => writeProfile(out, profile));
    console.error(`wap: measurement kept as a profile → ${out} (wap plan --profile ${v['save-profile']})`);
  }
  if (v.json) {
    console.log(JSON.stringify(report, null, 2));
    return 0;
  }
  console.log(`Validate ${report.model} at batch ${report.batch} on ${report.devicesDescription}, torch ${report.torchVersion} (${report.python}); median of ${report.steps} steps after ${report.warmup} warm-up`);
  for (const l of validationTable(report)) console.log(l);
  const c = report.calibration;
  console.log(
    `Calibration: ${(c.tflops * 1e3).toFixed(1)} GFLOP/s per process (${c.threadsPerProcess} thread${c.threadsPerProcess > 1 ? 's' : ''}), all-reduce α ${c.allreduceAlphaUs.toFixed(0)} µs β ${c.allreduceBandwidthGBs.toFixed(2)} GB/s, memory ${c.memoryBandwidthGBs.toFixed(1)} GB/s`,
  );
  for (const n of report.notValidated) console.log(`Not validated: ${n}`);
  for (const w of report.warnings) console.error(`warning: ${w}`);
  console.log(`Predicted/measured step: ${fmtMs(report.predictedStepMs)} / ${fmtMs(report.measuredStepMs)} ms = ${report.ratio.toFixed(2)}`);
  return 0;
}

export const validateCommand: CliCommand = { summary: 'run a few real data-parallel steps with torchrun and compare with the prediction', run };
