/**
 * How many GPUs a launch command starts its script on, read from the launcher's own options (the words between
 * the launcher and the script):
 * - torchrun (and `python -m torch.distributed.run|launch`): --nproc_per_node × --nnodes;
 * - deepspeed: --num_gpus × --num_nodes, or the GPUs `--include host:0,1@host2:0,1` lists; without --num_gpus, one
 *   process per GPU of each machine (DeepSpeed's default), which `launchProcesses` says and only a cluster counts;
 * - accelerate launch: --num_processes, the total over all machines.
 * `launchWorld` is undefined wherever the launcher decides at run time: all visible GPUs (deepspeed without a count,
 * torchrun's `gpu`/`auto`: `launchProcesses` says these), a hostfile's machines, an elastic min:max range, a count
 * computed in the shell. `$NGPU` counts where the script assigns
 * it once, as the torchrun reader reads it. The GPU-count findings stay the torchrun reader's; this is the setup's.
 */
import { programName, torchrunCounts } from './launchScripts';
import { MalformedConfig } from './types';
import { resolveReference, unquote, type Assignment, type Command } from './shellWords';

export type Launcher = 'torchrun' | 'deepspeed' | 'accelerate';

/** `python -m <module>` forms of the launchers. */
const MODULES: Record<string, Launcher> = {
  'torch.distributed.run': 'torchrun', 'torch.distributed.launch': 'torchrun',
  'deepspeed.launcher.runner': 'deepspeed', 'accelerate.commands.launch': 'accelerate',
};

const optionName = (raw: string): string => raw.replace(/^-+/, '').replace(/-/g, '_');

/** The launcher among words[from..to) and the index of its first option word. */
export function findLauncher(words: Command, from: number, to: number): { launcher: Launcher; options: number } | undefined {
  for (let i = from; i < to; i++) {
    const raw = words[i]!.raw;
    const name = raw.startsWith('--') ? '' : programName(raw);
    if (name === 'torchrun' || name === 'deepspeed') return { launcher: name, options: i + 1 };
    // `accelerate launch`: the subcommand comes first.
    if (name === 'accelerate' && words[i + 1]?.raw === 'launch') return { launcher: 'accelerate', options: i + 2 };
    const module = raw === '-m' ? MODULES[words[i + 1]?.raw ?? ''] : undefined;
    if (module) return { launcher: module, options: i + 2 };
  }
  return undefined;
}

/** The launcher's options as written (`--name value`, `--name=value`; a bare flag has none), by normalised name. */
export function launcherOptions(words: Command, from: number, to: number): Map<string, { raw: string; start: number } | undefined> {
  const out = new Map<string, { raw: string; start: number } | undefined>();
  for (let i = from; i < to; i++) {
    const w = words[i]!;
    if (!w.raw.startsWith('-')) continue;
    const eq = w.raw.indexOf('=');
    if (eq >= 0) out.set(optionName(w.raw.slice(0, eq)), { raw: w.raw.slice(eq + 1), start: w.start + eq + 1 });
    else if (i + 1 < to && !words[i + 1]!.raw.startsWith('-')) out.set(optionName(w.raw), { raw: words[i + 1]!.raw, start: words[++i]!.start });
    else out.set(optionName(w.raw), undefined);
  }
  return out;
}

/** An option's value as written or through the script's one assignment of the variable, trimmed; undefined when computed. */
function valueOf(value: { raw: string; start: number }, assignments: Assignment[]): string | undefined {
  let v: { value: string } | undefined = unquote(value.raw, value.start);
  if (v.value.startsWith('$')) v = resolveReference(v.value, value.start, assignments);
  return v?.value.trim();
}

/** A whole number as written or through the script's one assignment of the variable; undefined otherwise. */
function count(value: { raw: string; start: number } | undefined, assignments: Assignment[]): number | undefined {
  const text = value ? valueOf(value, assignments) ?? '' : '';
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

/** `localhost:0,1,2@node2:0,1` → 5; a host without its GPU list (all of them) is not countable here. */
function includedGpus(raw: string): number | undefined {
  let total = 0;
  for (const host of unquote(raw, 0).value.split('@')) {
    const m = /^[^:]+:(\d+(?:,\d+)*)$/.exec(host);
    if (!m) return undefined;
    total += m[1]!.split(',').length;
  }
  return total;
}

/**
 * The processes a launch starts, as its launcher's options and documented defaults say: per machine (a count, or
 * one per GPU of the machine, with what says so) and on how many machines, or a total the launcher takes as one.
 */
export interface LaunchProcesses {
  launcher: Launcher;
  /** Processes per machine; `{ gpus }`: one per GPU of each machine, which only the machine knows. */
  perNode?: number | { gpus: string };
  /** Machines; undefined where a hostfile, an elastic range or the run decides. */
  nodes?: number;
  /** The whole count, where the launcher states it so (accelerate's --num_processes, deepspeed --include). */
  total?: number;
}

/** The processes the command at words[from..to) (launcher to script) starts, when its launcher says. */
export function launchProcesses(words: Command, from: number, to: number, assignments: Assignment[]): LaunchProcesses | undefined {
  const found = findLauncher(words, from, to);
  if (!found) return undefined;
  const { launcher } = found;
  const options = launcherOptions(words, found.options, to);
  const opt = (...names: string[]) => options.get(names.find((n) => options.has(n)) ?? '');
  const has = (...names: string[]) => names.some((n) => options.has(n));
  if (launcher === 'accelerate') return { launcher, total: count(opt('num_processes'), assignments) };
  if (launcher === 'torchrun') {
    let counts: ReturnType<typeof torchrunCounts>;
    try {
      counts = torchrunCounts(words, found.options, to, assignments);
    } catch (e) {
      // A count that is no number: the torchrun reader says so on the script; no count is read here.
      if (e instanceof MalformedConfig) return { launcher };
      throw e;
    }
    // Missing, torchrun's defaults: one process per machine, one machine.
    const perNode = !counts.perNodeNamed ? 1 : counts.perNode?.perGpu ? { gpus: counts.perNode.perGpu } : counts.perNode?.value?.value;
    return { launcher, perNode, nodes: counts.nodes ? counts.nodes.value?.value : 1 };
  }
  // DeepSpeed refuses --include/--exclude beside --num_gpus/--num_nodes: the list alone says the GPUs.
  const include = opt('include', 'i');
  if (include) return { launcher, total: includedGpus(include.raw) };
  if (has('exclude', 'e')) return { launcher };
  const gpusRaw = opt('num_gpus', 'num_accelerators');
  // Without --num_gpus (or with -1) DeepSpeed starts one process per GPU it finds on each machine
  // (https://www.deepspeed.ai/getting-started/#resource-configuration-single-node).
  const perNode = !gpusRaw || gpusRaw.raw === '-1' ? { gpus: 'deepspeed without --num_gpus' } : count(gpusRaw, assignments);
  const nodesRaw = opt('num_nodes');
  // Without --num_nodes (or with -1) DeepSpeed runs on every machine of the hostfile, or on this one without one.
  const nodes = nodesRaw && nodesRaw.raw !== '-1' ? count(nodesRaw, assignments) : has('hostfile', 'H') ? undefined : 1;
  return { launcher, perNode, nodes };
}

/** GPUs the command at words[from..to) (launcher to script) runs on, when its launcher says it as a number. */
export function launchWorld(words: Command, from: number, to: number, assignments: Assignment[]): number | undefined {
  const p = launchProcesses(words, from, to, assignments);
  if (!p) return undefined;
  if (p.total !== undefined || p.launcher === 'accelerate') return p.total;
  return typeof p.perNode === 'number' && p.nodes !== undefined ? p.perNode * p.nodes : undefined;
}

/**
 * The launcher's own sharding, when it names one: `accelerate launch --config_file zero3.yaml` (that config's
 * DeepSpeed or FSDP plugin, which the Trainer's Accelerator takes), `--use_deepspeed`, `--use_fsdp`. Said as written.
 */
export function launcherSharding(words: Command, from: number, to: number): string | undefined {
  const file = acceleratePluginConfig(words, from, to);
  if (file) return `accelerate launch --config_file ${file.raw}`;
  const found = findLauncher(words, from, to);
  if (found?.launcher !== 'accelerate') return undefined;
  const options = launcherOptions(words, found.options, to);
  const plugin = ['use_deepspeed', 'use_fsdp'].find((f) => options.has(f));
  return plugin && `accelerate launch --${plugin}`;
}

/**
 * `accelerate launch --config_file zero3.yaml`: the accelerate config whose plugin (DeepSpeed, FSDP or plain DDP)
 * the Trainer's Accelerator takes; its value as written, unquoted, and where. A shell variable is the run's.
 */
export function acceleratePluginConfig(words: Command, from: number, to: number): { raw: string; path: string; range: { start: number; end: number } } | undefined {
  const found = findLauncher(words, from, to);
  if (found?.launcher !== 'accelerate') return undefined;
  const config = launcherOptions(words, found.options, to).get('config_file');
  if (!config) return undefined;
  const v = unquote(config.raw, config.start);
  return /[$`]/.test(v.value) ? undefined : { raw: config.raw, path: v.value, range: { start: v.start, end: v.end } };
}

/**
 * `accelerate launch --mixed_precision bf16`: the precision the launch hands the script's Accelerator (it overrides
 * the accelerate config's), unquoted, through the script's one assignment of a `$VAR`; undefined when not given.
 */
export function launchMixedPrecision(words: Command, from: number, to: number, assignments: Assignment[]): string | undefined {
  const found = findLauncher(words, from, to);
  if (found?.launcher !== 'accelerate') return undefined;
  const value = launcherOptions(words, found.options, to).get('mixed_precision');
  if (!value) return undefined;
  let v: { value: string } | undefined = unquote(value.raw, value.start);
  if (v.value.startsWith('$')) v = resolveReference(v.value, value.start, assignments);
  return v?.value.trim() || undefined;
}
