/**
 * Hugging Face Accelerate config YAML (`accelerate config` writes it to
 * ~/.cache/huggingface/accelerate/default_config.yaml; projects keep copies).
 * Reads num_processes (the total over all machines), num_machines,
 * distributed_type, gpu_ids and mixed_precision.
 */
import type { PlanReport } from '../protocol/plan';
import { readAccelerateSetup } from './accelerateSetup';
import { withLinkedConfig } from './linkedConfig';
import { compareSetup, setupNotes } from './setup';
import { checkDeviceIds, compareLaunch, planTarget } from './compare';
import { readCount, readGpuIds, readString, parseYamlConfig } from './yamlDoc';
import type { ConfigFinding, ConfigReader, LaunchSettings, TextEdit } from './types';

const DISTRIBUTED_TYPES: Record<string, NonNullable<LaunchSettings['parallelism']>['value']> = {
  NO: 'single',
  MULTI_GPU: 'data',
  DEEPSPEED: 'sharded',
  FSDP: 'sharded',
  MEGATRON_LM: 'other',
  MULTI_CPU: 'other',
  MULTI_NPU: 'other',
  MULTI_MLU: 'other',
  MULTI_MUSA: 'other',
  MULTI_XPU: 'other',
  MULTI_HPU: 'other',
  MULTI_SDAA: 'other',
  XLA: 'other',
  TPU: 'other',
};
const MIXED_PRECISION = ['no', 'fp16', 'bf16', 'fp8'];

function isYamlName(fileName: string): boolean {
  return /\.ya?ml$/i.test(fileName);
}

export const accelerateReader: ConfigReader = {
  format: 'accelerate',
  detect(fileName, text) {
    return isYamlName(fileName) && /^[ \t]*(distributed_type|num_processes)[ \t]*:/m.test(text);
  },
  check(fileName, text, plan, files) {
    const doc = parseYamlConfig(text);
    const numProcesses = readCount(doc, 'num_processes');
    const numMachines = readCount(doc, 'num_machines');
    const distributedType = readString(doc, 'distributed_type');
    const gpuIds = readGpuIds(doc, 'gpu_ids');
    const mixedPrecision = readString(doc, 'mixed_precision');
    const findings: ConfigFinding[] = [];

    const kind = distributedType ? DISTRIBUTED_TYPES[distributedType.value.toUpperCase()] : undefined;
    if (distributedType && kind === undefined) {
      findings.push({
        format: 'accelerate', severity: 'warning', code: 'unknown-value', range: distributedType.range,
        message: `Unknown distributed_type '${distributedType.value}'; Accelerate knows ${Object.keys(DISTRIBUTED_TYPES).join(', ')}`,
      });
    }
    if (mixedPrecision && !MIXED_PRECISION.includes(mixedPrecision.value.toLowerCase())) {
      findings.push({
        format: 'accelerate', severity: 'warning', code: 'unknown-value', range: mixedPrecision.range,
        message: `Unknown mixed_precision '${mixedPrecision.value}'; Accelerate accepts ${MIXED_PRECISION.join(', ')}`,
      });
    }
    const single = distributedType?.value.toUpperCase() === 'NO';
    if (single && numProcesses && numProcesses.value > 1) {
      // A one-GPU plan resolves it the other way (num_processes: 1, the GPU-count fix); switching to MULTI_GPU would contradict it.
      const oneGpuPlan = plan !== undefined && plan.plan.gpus <= 1;
      findings.push({
        format: 'accelerate', severity: 'warning', code: 'distributed-type', range: distributedType!.range,
        message: `distributed_type is NO but num_processes is ${numProcesses.value}: the extra processes would not train together${oneGpuPlan ? '; the plan uses one GPU, so num_processes: 1 is the fix' : ''}`,
        ...(oneGpuPlan ? {} : { fix: { title: 'Set distributed_type to MULTI_GPU', edits: distributedType!.set!('MULTI_GPU') } }),
      });
    }

    // Moving a single-process config to several GPUs also has to switch on distribution.
    const total = numProcesses && {
      ...numProcesses,
      set: (n: number): TextEdit[] => [
        ...numProcesses.set!(n),
        ...(n > 1 && single ? distributedType!.set!('MULTI_GPU') : []),
      ],
    };
    const launch: LaunchSettings = {
      total,
      nodes: numMachines,
      deviceIds: gpuIds,
      parallelism: distributedType && kind ? { value: kind, range: distributedType.range } : undefined,
    };
    findings.push(...checkDeviceIds('accelerate', launch, 'num_processes', 'gpu_ids', plan && planTarget(plan).gpusPerNode));
    const setup = withLinkedConfig(fileName, readAccelerateSetup(text, doc, numProcesses?.value), files);
    if (plan) {
      findings.push(...compareSetup('accelerate', text, setup, plan));
      findings.push(...compareWithPlan(launch, plan));
    } else findings.push(...setupNotes('accelerate', setup));
    return findings;
  },
  readSetup(_fileName, text) {
    const doc = parseYamlConfig(text);
    return readAccelerateSetup(text, doc, readCount(doc, 'num_processes')?.value);
  },
};

function compareWithPlan(launch: LaunchSettings, plan: PlanReport): ConfigFinding[] {
  return compareLaunch('accelerate', launch, plan, (t) => `num_processes: ${t.gpus}${t.nodes > 1 ? `, num_machines: ${t.nodes}` : ''}`);
}
