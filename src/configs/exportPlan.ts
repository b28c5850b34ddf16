/**
 * Plan → the files real distributed engines read: DeepSpeed config,
 * Accelerate config, Megatron-LM arguments, torchtitan config, torchrun / DeepSpeed / Horovod launch lines, and (for
 * every plan) runnable PyTorch parallelize() code (torchParallelize.ts). Every output says where
 * its numbers came from.
 */
import { EXPORT_FORMAT_IDS, type ExportFormatId } from '../protocol/exportFormats';
import type { PlanReport } from '../protocol/plan';
import { modelParallelLayers, planTarget } from './compare';
import { deepspeedWorld } from './deepspeed';
import { megatronArguments } from './megatronExport';
import { torchtitanToml } from './torchtitanExport';
import { accelerateSetupLines, deepspeedSetupKeys, plannedBatchSplit } from './setupExport';
import { torchParallelizeSnippet } from './torchParallelize';

export type ExportFormat = ExportFormatId | 'placement';
/** The formats to offer; 'placement' is still accepted as the old name of 'torch-parallelize'. */
export const EXPORT_FORMATS: readonly ExportFormat[] = EXPORT_FORMAT_IDS;
export const RENAMED_FORMATS: Readonly<Record<string, ExportFormat>> = { placement: 'torch-parallelize' };

export interface ExportedFile {
  fileName: string;
  content: string;
  description: string;
}

/**
 * Processes per machine. An even split when the plan's GPUs divide over the
 * machines; otherwise full machines then the remainder (9 GPUs on 8-GPU
 * machines: 8 + 1), never rounded up to GPUs the plan does not use.
 */
interface HostLayout {
  nodes: number;
  /** The count every machine runs, or undefined when the machines differ. */
  perNode: number | undefined;
  /** Processes on each machine, in host order. */
  slots: number[];
  hosts: string[];
  total: number;
}

function hostLayout(report: PlanReport): HostLayout {
  const t = planTarget(report);
  const slots = t.perNode !== undefined
    ? Array.from({ length: t.nodes }, () => t.perNode!)
    : Array.from({ length: t.nodes }, (_, i) => Math.min(t.gpusPerNode, t.gpus - i * t.gpusPerNode));
  const hosts = t.nodes === 1 ? ['localhost'] : Array.from({ length: t.nodes }, (_, i) => `node${i}`);
  return { nodes: t.nodes, perNode: t.perNode, slots, hosts, total: t.gpus };
}

const splitText = (l: HostLayout): string => l.slots.join(' + ');

function planLine(report: PlanReport): string {
  const p = report.plan;
  const mp = modelParallelLayers(report);
  return `${report.model} on '${report.cluster.name}': ${p.gpus} GPU(s), global batch ${report.batch}, ` +
    `predicted ${p.samplesPerSec.toFixed(1)} samples/s (${p.stepTimeMs.toFixed(1)} ms/step)${mp ? `; ${mp}` : ''}`;
}

function mpNote(report: PlanReport, comment: string): string {
  const mp = modelParallelLayers(report);
  return mp ? `${comment} Note: a launcher cannot split ${mp} over GPUs; see \`wap export --format torch-parallelize\`.\n` : '';
}

function deepspeedConfig(report: PlanReport): ExportedFile {
  const world = deepspeedWorld(report);
  const pipeline = report.plan.pipeline;
  // The plan's own micro-batch and accumulation when they make its batch over this world (a setup whose degrees
  // cover every GPU); else one pass (or the pipeline's micro-batches) per replica.
  const split = plannedBatchSplit(report);
  const planned = split && split.micro * split.accumulation * world === report.batch ? split : undefined;
  const accum = planned?.accumulation ?? (pipeline ? pipeline.microBatches : 1);
  const exact = planned?.micro ?? report.batch / (world * accum);
  const micro = Math.max(1, Math.floor(exact));
  const train = micro * accum * world;
  const setup = deepspeedSetupKeys(report);
  const config = {
    train_batch_size: train,
    train_micro_batch_size_per_gpu: micro,
    gradient_accumulation_steps: accum,
    ...setup.value,
    // Without a setup, ZeRO-1: it shards optimizer state at the same communication volume as plain data parallelism.
    ...(report.plan.setup ? {} : { zero_optimization: { stage: report.plan.gpus > 1 ? 1 : 0 } }),
    steps_per_print: 100,
    wall_clock_breakdown: false,
  };
  const notes = [
    `train_batch_size ${train} = micro ${micro} × accumulation ${accum} × data-parallel world ${world}${pipeline ? ` (${report.plan.gpus} GPUs in ${pipeline.stages} pipeline stages)` : ''}.`,
    train !== report.batch ? `The plan's batch ${report.batch} does not split evenly over ${world * accum}; rounded to ${train}.` : '',
    modelParallelLayers(report) ? `Model parallelism for ${modelParallelLayers(report)} cannot be said in a DeepSpeed config: see the torch-parallelize export.` : '',
    ...setup.notes,
  ].filter(Boolean);
  return {
    fileName: 'ds_config.json',
    content: JSON.stringify(config, null, 2) + '\n',
    description: `DeepSpeed config for ${planLine(report)}. ${notes.join(' ')}`,
  };
}

function accelerateConfig(report: PlanReport): ExportedFile {
  const layout = hostLayout(report);
  const { nodes, perNode, total } = layout;
  const setup = accelerateSetupLines(report, total);
  const lines = [
    `# HF Accelerate config generated by WAP from the plan for`,
    `# ${planLine(report)}.`,
    mpNote(report, '#').trimEnd(),
    // Accelerate starts num_processes / num_machines processes on every machine; it cannot say 8 + 1.
    perNode === undefined
      ? `# The plan's ${total} GPUs split unevenly over ${nodes} machines (${splitText(layout)}), which Accelerate cannot express:\n` +
        '# it starts num_processes / num_machines processes on every machine. Use the torchrun, hostfile or Horovod export for this plan.'
      : '',
    `# Use with: accelerate launch --config_file accelerate_config.yaml train.py`,
    ...setup.notes.map((n) => `# Note: ${n}`),
    `compute_environment: LOCAL_MACHINE`,
    `num_machines: ${nodes}`,
    `num_processes: ${total} # total over all machines`,
    `machine_rank: 0${nodes > 1 ? ' # set to 0…' + (nodes - 1) + ' on each machine' : ''}`,
    ...(nodes > 1 ? [`main_process_ip: MAIN_HOST # placeholder: the first machine's address`, `main_process_port: 29500`, `rdzv_backend: static`, `same_network: true`] : []),
    `gpu_ids: ${nodes === 1 ? Array.from({ length: total }, (_, i) => i).join(',') : 'all'}`,
    ...setup.value,
    `main_training_function: main`,
    `use_cpu: false`,
  ].filter(Boolean);
  const notes = setup.notes.length ? ` ${setup.notes.join(' ')}` : '';
  return { fileName: 'accelerate_config.yaml', content: lines.join('\n') + '\n', description: `Accelerate config for ${planLine(report)}: ${total} process(es) on ${nodes} machine(s)${perNode === undefined ? ` (uneven ${splitText(layout)}: Accelerate cannot launch that; use the torchrun or hostfile export)` : ''}.${notes}` };
}

/** The torchrun lines that start `program` with `args` on the plan's machines (c10d rendezvous across machines). */
function torchrunLines(report: PlanReport, program: string, args: string): string[] {
  const layout = hostLayout(report);
  const { nodes, perNode } = layout;
  if (nodes === 1) return [`torchrun --standalone --nproc_per_node=${perNode} ${program} ${args}`];
  return [
    `# Run this same command on each of the ${nodes} machines; c10d rendezvous assigns the ranks.`,
    '# RDZV_HOST is a placeholder: the address of any one machine, reachable from all others.',
    'RDZV_HOST="${RDZV_HOST:?set RDZV_HOST to one machine\'s address}"',
    // torchrun allows a different process count per machine; the plan's uneven split needs it.
    ...(perNode === undefined
      ? [
        `# The plan's ${layout.total} GPUs split unevenly: machine i runs SLOTS[i] processes (${splitText(layout)}).`,
        `NODE_INDEX="\${NODE_INDEX:?set NODE_INDEX to this machine's index, 0…${nodes - 1}}"`,
        `SLOTS=(${layout.slots.join(' ')})`,
        'NPROC="${SLOTS[$NODE_INDEX]}"',
      ]
      : []),
    `torchrun --nnodes=${nodes} --nproc_per_node=${perNode ?? '"$NPROC"'} \\`,
    `  --rdzv_id=wap-${report.model.replace(/[^A-Za-z0-9_-]/g, '_')} --rdzv_backend=c10d --rdzv_endpoint="$RDZV_HOST:29500" \\`,
    `  ${program} ${args}`,
  ];
}

function torchrunScript(report: PlanReport): ExportedFile {
  const layout = hostLayout(report);
  const { nodes, perNode } = layout;
  const head = ['#!/usr/bin/env bash', `# torchrun launch generated by WAP for ${planLine(report)}.`, mpNote(report, '#').trimEnd(), 'set -euo pipefail', 'TRAIN_SCRIPT="${TRAIN_SCRIPT:-train.py}"'].filter(Boolean);
  const body = torchrunLines(report, '"$TRAIN_SCRIPT"', '"$@"');
  return { fileName: 'launch_torchrun.sh', content: [...head, ...body].join('\n') + '\n', description: `torchrun launch: ${perNode === undefined ? `${splitText(layout)} processes on ${nodes} machines` : `${nodes} machine(s) × ${perNode} process(es)`} for ${planLine(report)}.` };
}

/** Megatron-LM's pretrain script launched with the plan's parallel and batch arguments (megatronExport.ts). */
function megatronScript(report: PlanReport): ExportedFile {
  const args = megatronArguments(report);
  const lines = [
    '#!/usr/bin/env bash',
    `# Megatron-LM launch generated by WAP for ${planLine(report)}.`,
    '# The model\'s own arguments (--num-layers, --hidden-size, --num-attention-heads, --seq-length, data, optimizer)',
    '# are not generated: pass them to this script, which appends them after the plan\'s.',
    ...args.notes.map((n) => `# Note: ${n}`),
    'set -euo pipefail',
    'PRETRAIN_SCRIPT="${PRETRAIN_SCRIPT:-pretrain_gpt.py}"',
    'PLAN_ARGS=(',
    ...args.value.map((a) => `  ${a}`),
    ')',
    ...torchrunLines(report, '"$PRETRAIN_SCRIPT"', '"${PLAN_ARGS[@]}" "$@"'),
  ];
  return { fileName: 'pretrain_gpt.sh', content: lines.join('\n') + '\n', description: `Megatron-LM launch for ${planLine(report)}.${args.notes.length ? ` ${args.notes.join(' ')}` : ''}` };
}

function deepspeedHostfile(report: PlanReport): ExportedFile {
  const layout = hostLayout(report);
  const { nodes, perNode, hosts, slots } = layout;
  // --num_gpus is one count for every machine; with an uneven split the hostfile's slots say it.
  const launch = `deepspeed --hostfile=hostfile --num_nodes=${nodes}${perNode !== undefined ? ` --num_gpus=${perNode}` : ''} train.py --deepspeed --deepspeed_config ds_config.json`;
  const lines = [
    `# DeepSpeed hostfile generated by WAP for ${planLine(report)}.`,
    nodes > 1 ? '# node0… are placeholders: use hostnames reachable by passwordless ssh from the first machine.' : '# One machine: localhost.',
    `# Launch: ${launch}`,
    mpNote(report, '#').trimEnd(),
    ...hosts.map((h, i) => `${h} slots=${slots[i]}`),
  ].filter(Boolean);
  const shape = perNode !== undefined ? `${nodes} × ${perNode}` : splitText(layout);
  return { fileName: 'hostfile', content: lines.join('\n') + '\n', description: `DeepSpeed hostfile (${shape} GPUs) and launch line: ${launch}` };
}

function horovodScript(report: PlanReport): ExportedFile {
  const { nodes, hosts, slots, total } = hostLayout(report);
  const cmd = `horovodrun -np ${total} -H ${hosts.map((h, i) => `${h}:${slots[i]}`).join(',')} python train.py "$@"`;
  const lines = [
    '#!/usr/bin/env bash',
    `# Horovod launch generated by WAP for ${planLine(report)}.`,
    nodes > 1 ? '# node0… are placeholders for your hostnames (passwordless ssh from this machine).' : '',
    mpNote(report, '#').trimEnd(),
    'set -euo pipefail',
    cmd,
  ].filter(Boolean);
  return { fileName: 'launch_horovod.sh', content: lines.join('\n') + '\n', description: `Horovod: ${cmd}` };
}

export function exportPlan(report: PlanReport, format: ExportFormat): ExportedFile {
  switch (format) {
    case 'deepspeed':
      return deepspeedConfig(report);
    case 'accelerate':
      return accelerateConfig(report);
    case 'megatron':
      return megatronScript(report);
    case 'torchtitan': {
      const toml = torchtitanToml(report);
      const header = [`# torchtitan job config generated by WAP for ${planLine(report)}.`, '# Merge into your job config: [model], [optimizer], data and checkpoint sections are your own.', ...toml.notes.map((n) => `# Note: ${n}`)];
      return { fileName: 'wap_torchtitan.toml', content: `${header.join('\n')}\n${toml.value}`, description: `torchtitan config for ${planLine(report)}.${toml.notes.length ? ` ${toml.notes.join(' ')}` : ''}` };
    }
    case 'torchrun':
      return torchrunScript(report);
    case 'hostfile':
      return deepspeedHostfile(report);
    case 'horovod':
      return horovodScript(report);
    case 'torch-parallelize':
      return torchParallelizeSnippet(report);
    case 'placement': {
      const file = torchParallelizeSnippet(report);
      return { ...file, description: `'placement' was renamed 'torch-parallelize' (runnable DTensor/FSDP2 code instead of a preview). ${file.description}` };
    }
    default:
      throw new Error(`unknown export format '${String(format)}'; use one of ${EXPORT_FORMATS.join(', ')}`);
  }
}
