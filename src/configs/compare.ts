/**
 * Compares what a launch config asks for with the plan. Shared by every
 * format: each format module reads its values into LaunchSettings (with edit
 * closures), and this module decides what disagrees and what the fix is.
 */
import type { PlanReport } from '../protocol/plan';
import type { ConfigFinding, ConfigFix, ConfigFormat, LaunchSettings, TextEdit, TextRange } from './types';

/** How the plan's GPU count maps onto machines of the plan's cluster. */
export interface PlanTarget {
  gpus: number;
  nodes: number;
  /** Undefined when the GPUs do not split evenly over the machines. */
  perNode: number | undefined;
  gpusPerNode: number;
}

/** A cluster's GPUs per machine, from the summary every plan report carries. */
export function gpusPerMachine(cluster: { gpus: number; nodes: number }): number {
  return Math.max(1, Math.round(cluster.gpus / Math.max(1, cluster.nodes)));
}

export function planTarget(plan: PlanReport): PlanTarget {
  const gpus = Math.max(1, plan.plan.gpus);
  const gpusPerNode = gpusPerMachine(plan.cluster);
  const nodes = Math.ceil(gpus / gpusPerNode);
  return { gpus, nodes, perNode: gpus % nodes === 0 ? gpus / nodes : undefined, gpusPerNode };
}

/** How a message names the requested count, e.g. "8 processes requested". */
export type Subject = (n: number) => string;
const defaultSubject: Subject = (n) => `${n} process${n === 1 ? '' : 'es'} requested`;

const percent = (x: number): string => `${Math.round(x * 100)}%`;
// A gain under 10% keeps two decimals: "1.0× the throughput" would read as no gain at all.
const times = (x: number): string => `${x < 1.095 ? x.toFixed(2) : x.toFixed(1)}×`;
const rate = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toPrecision(3));

/** The sentence that explains why the plan's GPU count beats the requested one, from plan.scaling. */
export function scalingMessage(requested: number, plan: PlanReport, subject = defaultSubject): { severity: 'error' | 'warning'; message: string } {
  const planned = plan.plan;
  const gpus = planned.gpus;
  const feasible = plan.scaling.filter((p) => p.feasible);
  const best = Math.max(planned.samplesPerSec, ...feasible.map((p) => p.samplesPerSec));
  const at = plan.scaling.find((p) => p.gpus === requested);
  if (at?.refusedByScript) return { severity: 'error', message: `${subject(requested)}, but ${at.reason}; the plan uses ${gpus}` };
  if (at && !at.feasible) {
    return {
      severity: 'error',
      message: `${subject(requested)}, but the model does not fit on ${requested} GPU${requested === 1 ? '' : 's'}${at.reason ? ` (${at.reason})` : ''}; the plan uses ${gpus}`,
    };
  }
  if (requested > plan.cluster.gpus) {
    return {
      severity: 'warning',
      message: `${subject(requested)}, but cluster '${plan.cluster.name}' has ${plan.cluster.gpus} GPUs; the plan uses ${gpus}`,
    };
  }
  if (requested > gpus) {
    const share = planned.samplesPerSec / best;
    let message = `${subject(requested)}; the plan reaches ${share >= 0.995 ? 'the best throughput' : `${percent(share)} of the best throughput`} on ${gpus} GPU${gpus === 1 ? '' : 's'}`;
    if (at && at.energyJPerSample > 0) {
      const saving = 1 - planned.energyJPerSample / at.energyJPerSample;
      if (saving >= 0.005) message += ` and saves ${percent(saving)} energy`;
      if (at.samplesPerSec < planned.samplesPerSec) message += ` (${requested} GPUs are slower: ${rate(at.samplesPerSec)} vs ${rate(planned.samplesPerSec)} samples/s)`;
    }
    return { severity: 'warning', message };
  }
  let message = `${subject(requested)}; the plan uses ${gpus} GPUs`;
  if (at && at.samplesPerSec > 0) message += ` for ${times(planned.samplesPerSec / at.samplesPerSec)} the throughput (${rate(planned.samplesPerSec)} vs ${rate(at.samplesPerSec)} samples/s)`;
  else message += ` (${rate(planned.samplesPerSec)} samples/s)`;
  return { severity: 'warning', message };
}

/** Keeps the user's choice of ids: drops from the end, or adds the lowest unused ids. */
export function resizeDeviceIds(ids: number[], count: number): number[] {
  if (count <= ids.length) return ids.slice(0, count);
  const out = [...ids];
  for (let id = 0; out.length < count; id++) if (!out.includes(id)) out.push(id);
  return out;
}

/** The world size a launch config asks for, or undefined when it does not say. */
export function requestedWorld(launch: LaunchSettings): number | undefined {
  if (launch.total) return launch.total.value;
  const perNode = launch.perNode?.value ?? launch.deviceIds?.value.length;
  if (perNode === undefined) return undefined;
  return perNode * (launch.nodes?.value ?? 1);
}

function gpuCountFix(launch: LaunchSettings, target: PlanTarget, describe: string): ConfigFix | undefined {
  const edits: TextEdit[] = [];
  const add = (e: TextEdit[] | undefined): boolean => (e ? (edits.push(...e), true) : false);
  if (launch.total) {
    if (!launch.total.set) return undefined;
    // The total alone would crowd every process onto the one machine a missing num_machines means.
    if (!launch.nodes && target.nodes !== 1) return undefined;
    add(launch.total.set(target.gpus));
    if (launch.nodes && launch.nodes.value !== target.nodes && !add(launch.nodes.set?.(target.nodes))) return undefined;
    // Device ids name the GPUs of one machine (Accelerate's gpu_ids), so they follow the per-machine count.
    if (launch.deviceIds && target.perNode !== undefined) add(launch.deviceIds.set?.(resizeDeviceIds(launch.deviceIds.value, target.perNode)));
  } else {
    if (target.perNode === undefined) return undefined;
    if (target.nodes !== (launch.nodes?.value ?? 1)) {
      if (!launch.nodes?.set) return undefined; // adding a missing --nnodes is not an in-place edit
      add(launch.nodes.set(target.nodes));
    }
    if (launch.perNode) {
      if (!add(launch.perNode.set?.(target.perNode))) return undefined;
      if (launch.deviceIds) add(launch.deviceIds.set?.(resizeDeviceIds(launch.deviceIds.value, target.perNode)));
    } else if (launch.deviceIds) {
      if (!add(launch.deviceIds.set?.(resizeDeviceIds(launch.deviceIds.value, target.perNode)))) return undefined;
    } else return undefined;
  }
  if (edits.length === 0) return undefined;
  return { title: `Use ${target.gpus} GPU${target.gpus === 1 ? '' : 's'} as planned (${describe})`, edits, preferred: true };
}

/** Names of layers the plan splits across GPUs, shortened for a message. */
export function modelParallelLayers(plan: PlanReport): string | undefined {
  const split = plan.plan.layers.filter((l) => l.strategy === 'model' || l.strategy === 'hybrid');
  if (split.length === 0) return undefined;
  // Name the weighted layers (Linear, Conv…); the activations between them just follow their layout.
  const weighted = split.filter((l) => l.params > 0);
  const layers = weighted.length > 0 ? weighted : split;
  const types = [...new Set(layers.map((l) => l.type))];
  const names = layers.slice(0, 3).map((l) => l.name).join(', ') + (layers.length > 3 ? ` and ${layers.length - 3} more` : '');
  const widest = Math.max(...layers.map((l) => l.modelDegree));
  return `the ${types.join('/')} layer${layers.length === 1 ? '' : 's'} ${names} (split ×${widest} in the plan)`;
}

/**
 * Plan-vs-config findings common to all launch formats. `describe` renders the
 * fix title's detail, e.g. "num_processes: 4".
 */
export function compareLaunch(
  format: ConfigFormat,
  launch: LaunchSettings,
  plan: PlanReport,
  describe: (target: PlanTarget) => string,
  subject?: Subject,
): ConfigFinding[] {
  const findings: ConfigFinding[] = [];
  const target = planTarget(plan);
  const world = requestedWorld(launch);
  const anchor = launch.total ?? launch.perNode ?? launch.deviceIds;
  if (world !== undefined && anchor && world !== target.gpus) {
    const { severity, message } = scalingMessage(world, plan, subject);
    findings.push({ format, severity, code: 'gpu-count', message, range: anchor.range, fix: gpuCountFix(launch, target, describe(target)) });
  } else if (world === target.gpus && launch.nodes && launch.nodes.value > target.nodes) {
    // Same GPU count spread over more machines than needed: the plan assumed the faster in-node links.
    const fix = launch.nodes.set && (launch.total || launch.perNode?.set) && target.perNode !== undefined
      ? { title: `Use ${target.nodes} machine(s) as planned`, edits: [...launch.nodes.set(target.nodes), ...(launch.total ? [] : launch.perNode!.set!(target.perNode))], preferred: true }
      : undefined;
    findings.push({
      format, severity: 'warning', code: 'node-count', range: launch.nodes.range, fix,
      message: `${launch.nodes.value} machines requested; the plan fits its ${target.gpus} GPUs on ${target.nodes} machine(s) of '${plan.cluster.name}', where links are faster than the network`,
    });
  } else if (world === target.gpus && target.nodes > (launch.nodes?.value ?? 1)) {
    findings.push(tooFewMachines(format, launch, plan, target, anchor!));
  }
  const mp = modelParallelLayers(plan);
  const kind = launch.parallelism?.value;
  if (mp && (kind === 'data' || kind === 'sharded')) {
    const what = kind === 'data' ? 'DP' : 'Sharded DP (ZeRO/FSDP)';
    findings.push({
      format, severity: 'info', code: 'model-parallel-advice', range: (launch.parallelism ?? anchor)!.range,
      message: `${what} on ${world ?? target.gpus} GPUs but ${mp} want model parallelism: consider splitting them across GPUs (export runnable code with \`wap export --format torch-parallelize\`) or a tensor-parallel strategy`,
    });
  }
  if (plan.plan.pipeline && (kind === 'data' || kind === 'sharded')) {
    const p = plan.plan.pipeline;
    findings.push({
      format, severity: 'info', code: 'pipeline-advice', range: (launch.parallelism ?? anchor)!.range,
      message: `The plan pipelines the model in ${p.stages} stages with ${p.microBatches} micro-batches (${p.schedule}); a plain data-parallel launch does not: see \`wap export --format torch-parallelize\``,
    });
  }
  return findings;
}

/**
 * The right GPU count crowded onto fewer machines than the plan's cluster can
 * hold it on (e.g. 16 processes on one machine of 8-GPU machines): the launch
 * cannot start as written. The fix sets the machine count and, per machine,
 * the process count and device ids together so they stay consistent.
 */
function tooFewMachines(format: ConfigFormat, launch: LaunchSettings, plan: PlanReport, target: PlanTarget, anchor: { range: TextRange }): ConfigFinding {
  const machines = launch.nodes?.value ?? 1;
  const edits: TextEdit[] = [];
  let fixable = !!launch.nodes?.set && target.perNode !== undefined;
  if (fixable) {
    edits.push(...launch.nodes!.set!(target.nodes));
    if (!launch.total) {
      if (launch.perNode?.set) edits.push(...launch.perNode.set(target.perNode!));
      else if (!launch.deviceIds?.set) fixable = false;
    }
    if (fixable && launch.deviceIds) {
      const ids = launch.deviceIds.set?.(resizeDeviceIds(launch.deviceIds.value, target.perNode!));
      if (ids) edits.push(...ids);
      else fixable = false;
    }
  }
  const layout = target.perNode !== undefined ? `${target.nodes} machines × ${target.perNode} GPUs` : `${target.nodes} machines`;
  return {
    format, severity: 'warning', code: 'node-count', range: (launch.nodes ?? anchor).range,
    message: `${machines} machine${machines === 1 ? '' : 's'} requested for ${target.gpus} processes, but the machines of '${plan.cluster.name}' have ${target.gpusPerNode} GPUs each; the plan runs on ${layout}`,
    fix: fixable ? { title: `Use ${layout} as planned`, edits, preferred: true } : undefined,
  };
}

/** Internal consistency: the listed devices must cover the processes started on a machine. */
/**
 * `maxPerNode` (the plan's GPUs per machine, when a plan is open) keeps the fix
 * from listing more ids than a machine has; the node-count finding fixes that case.
 */
export function checkDeviceIds(format: ConfigFormat, launch: LaunchSettings, perNodeLabel: string, idsLabel: string, maxPerNode?: number): ConfigFinding[] {
  const ids = launch.deviceIds;
  const machines = launch.nodes?.value ?? 1;
  // A total (Accelerate's num_processes) counts every machine; the ids list one machine's GPUs.
  const perNode = launch.perNode?.value ?? (launch.total && machines > 0 && launch.total.value % machines === 0 ? launch.total.value / machines : undefined);
  if (!ids || perNode === undefined || ids.value.length === perNode) return [];
  const fewer = ids.value.length < perNode;
  const overfull = maxPerNode !== undefined && perNode > maxPerNode;
  return [{
    format, severity: fewer ? 'error' : 'warning', code: 'device-ids-mismatch', range: ids.range,
    message: (fewer
      ? `${idsLabel} lists ${ids.value.length} GPU(s) but ${perNodeLabel} starts ${perNode} processes per machine: some processes get no GPU`
      : `${idsLabel} lists ${ids.value.length} GPUs but ${perNodeLabel} starts only ${perNode} processes per machine`)
      + (overfull ? `; the plan's machines have only ${maxPerNode} GPUs each, so spread the processes over more machines` : ''),
    fix: ids.set && !overfull ? { title: `List ${perNode} GPU(s) in ${idsLabel}`, edits: ids.set(resizeDeviceIds(ids.value, perNode)) } : undefined,
  }];
}
