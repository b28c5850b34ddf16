/**
 * Launch scripts: torchrun (`torchrun`, `python -m torch.distributed.run|launch`)
 * with --nproc_per_node / --nproc-per-node and --nnodes, and CUDA_VISIBLE_DEVICES,
 * in shell scripts, Slurm batch files and Makefile recipes. `--nproc_per_node=gpu` (and `auto`, on a machine with
 * GPUs) starts one process per GPU of the machine: counted on the plan's machines and said; a default, a computed
 * or a CPU count is said too (launchCounts.ts). `scriptLaunch` finds the script every launcher runs, a `.py` path or
 * the module `-m pkg.module` names (nanochat's `torchrun … -m scripts.base_train`).
 */
import type { PlanReport } from '../protocol/plan';
import { checkDeviceIds, compareLaunch, planTarget } from './compare';
import { perGpuFinding, readCount, readingNotes, type CountReading } from './launchCounts';
import { expandedCommands } from './shellExpansion';
import { assignmentValue, isMakefileName, resolveReference, unquote, type Assignment, type Command, type Word } from './shellWords';
import { type ConfigFinding, type ConfigReader, type ConfigValue, type LaunchSettings, type TextEdit } from './types';

export function isLaunchScriptName(fileName: string, text: string): boolean {
  return /\.(sh|bash|zsh|ksh|slurm|sbatch|pbs|job)$/i.test(fileName) || isMakefileName(fileName) || /^#!.*\b(ba|z|k)?sh\b/.test(text);
}

/**
 * --nproc_per_node's words (torch.distributed.run determine_local_world_size): `gpu`, and `auto` where CUDA is
 * available, start one process per GPU of the machine; `cpu`/`xpu` start processes on something else.
 */
const PER_NODE_WORDS = { perGpu: new Set(['gpu', 'auto']), other: new Set(['cpu', 'xpu']) };

/** torchrun options that take no value; every other option is followed by one. */
const FLAG_OPTIONS = new Set(['standalone', 'no_python', 'module', 'm', 'run_path', 'h', 'help']);

interface TorchrunLaunch {
  launcher: Word;
  perNode?: ConfigValue<number>;
  nodes?: ConfigValue<number>;
  /** How --nproc_per_node and --nnodes read where they are no plain number (a default, `gpu`, computed). */
  readings: CountReading[];
  /** --nnodes is given but not a count (an elastic range, a computed value): not the one machine a missing one means. */
  nodesUnread?: boolean;
  /** No --nproc_per_node: torchrun's default, one process per machine, is the count. */
  perNodeDefaulted?: boolean;
  /** CUDA_VISIBLE_DEVICES in effect for this command (its own prefix, else the last one above it). */
  visible?: ConfigValue<number[]>;
  visibleStart?: number;
}

interface ScriptScan {
  launches: TorchrunLaunch[];
  visible: Array<ConfigValue<number[]> & { start: number }>;
}

const at = (start: number, end: number, newText: string): TextEdit[] => [{ start, end, newText }];

/** The program a command word runs: `/usr/bin/torchrun` and a Makefile recipe's `@torchrun` are torchrun. */
export function programName(raw: string): string {
  return raw.replace(/^[@+-]+/, '').replace(/^.*[/)]/, '');
}

const LAUNCHERS = /^(torchrun|accelerate|deepspeed|python[\d.]*|srun|mpirun|horovodrun)$/;

/** Modules `python -m` runs as the launcher itself: the training script comes after their options. */
const LAUNCHER_MODULES = /^(torch\.distributed\.(run|launch)|deepspeed\.launcher\.runner|accelerate\.commands\.launch)$/;
const MODULE_NAME = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/;

/** The training script a command launches: where its launcher and its script are named, and the script as a path. */
export interface ScriptLaunch {
  /** The launcher word (its first: `srun` in `srun torchrun …`). */
  launcher: number;
  /** The word that names the script: a `.py` path, or the module `-m` runs. */
  script: number;
  /**
   * The script as a path from the folder the launch runs in: the word unquoted, or `pkg/module.py` for
   * `-m pkg.module` (python, torchrun, deepspeed and accelerate all run a module as `python -m` does).
   */
  path: string;
  /** `-m pkg.module`, as written: run from the launch's folder, which is then on the script's import path. */
  module?: string;
}

/** Where a command names its launcher and the Python script (or module) that follows it. */
export function scriptLaunch(words: Command): ScriptLaunch | undefined {
  const launcher = words.findIndex((w) => !w.raw.startsWith('--') && LAUNCHERS.test(programName(w.raw)));
  if (launcher < 0) return undefined;
  for (let i = launcher + 1; i < words.length; i++) {
    const raw = words[i]!.raw;
    if (raw === '-m' || raw === '--module') {
      const module = unquote(words[i + 1]?.raw ?? '', 0).value;
      if (LAUNCHER_MODULES.test(module)) i++;
      else if (MODULE_NAME.test(module)) return { launcher, script: i + 1, path: `${module.replace(/\./g, '/')}.py`, module };
      continue;
    }
    if (/\.py["']?$/.test(raw) && !raw.startsWith('-')) return { launcher, script: i, path: unquote(raw, 0).value };
  }
  return undefined;
}

/** Index of the first option word after the launcher, or -1 when the command launches nothing. */
function launcherEnd(words: Command, assignments: Assignment[]): number {
  for (let i = 0; i < words.length; i++) {
    const raw = words[i]!.raw.replace(/^[@+-]+/, '');
    // `$(PYTHON) -m torch.distributed.run` in Makefiles: follow the variable to its value.
    const name = programName(raw.startsWith('$') ? (resolveReference(raw, 0, assignments)?.value ?? raw) : raw);
    if (name === 'torchrun') return i + 1;
    if (/^python[\d.]*$/.test(name)) {
      let j = i + 1;
      while (j < words.length && words[j]!.raw.startsWith('-') && words[j]!.raw !== '-m') j++;
      const mod = words[j + 1]?.raw;
      if (words[j]?.raw === '-m' && (mod === 'torch.distributed.run' || mod === 'torch.distributed.launch')) return j + 2;
      return -1;
    }
  }
  return -1;
}

function readVisible(raw: string, start: number): ConfigValue<number[]> | undefined {
  const v = unquote(raw, start);
  if (!/^\d+(,\d+)*$/.test(v.value.trim())) return undefined; // GPU UUIDs, variables, empty: not countable here
  return { value: v.value.split(',').map(Number), range: { start: v.start, end: v.end }, set: (ids) => at(v.start, v.end, ids.join(',')) };
}

/**
 * torchrun's --nproc_per_node and --nnodes among its option words [first, end) (the script's own arguments, after
 * the first word that is no option, are not its), read as counts (launchCounts.ts readCount), and whether
 * --nproc_per_node is named at all (a half-typed one without its value is). Where one is missing torchrun's
 * defaults apply: one process per machine (torchrun --help: default 1) on one machine, which each caller states.
 */
export function torchrunCounts(words: Command, first: number, end: number, assignments: Assignment[]): { perNode?: CountReading; perNodeNamed: boolean; nodes?: CountReading } {
  const out: { perNode?: CountReading; perNodeNamed: boolean; nodes?: CountReading } = { perNodeNamed: false };
  for (let i = first; i < end; i++) {
    const w = words[i]!;
    if (!w.raw.startsWith('-')) break;
    const eq = w.raw.indexOf('=');
    const name = (eq < 0 ? w.raw : w.raw.slice(0, eq)).replace(/^-+/, '').replace(/-/g, '_');
    let valueRaw: string | undefined;
    let valueStart = 0;
    if (eq >= 0) [valueRaw, valueStart] = [w.raw.slice(eq + 1), w.start + eq + 1];
    else if (!FLAG_OPTIONS.has(name) && i + 1 < end) [valueRaw, valueStart] = [words[++i]!.raw, words[i]!.start];
    if (name === 'nproc_per_node') out.perNodeNamed = true;
    if (valueRaw === undefined) continue;
    if (name === 'nproc_per_node') out.perNode = readCount('--nproc_per_node', valueRaw, valueStart, assignments, PER_NODE_WORDS);
    else if (name === 'nnodes') out.nodes = readCount('--nnodes', valueRaw, valueStart, assignments, { elastic: true });
  }
  return out;
}

let memo: { text: string; scan: ScriptScan } | undefined;

function scanScript(fileName: string, text: string): ScriptScan {
  if (memo?.text === text) return memo.scan;
  // torchrun $DISTRIBUTED_ARGS pretrain_gpt.py: the launcher's options as the list variable holds them.
  const { commands: expanded, assignments } = expandedCommands(fileName, text);
  const commands = expanded.map((c) => c.words);
  const visible = assignments
    .filter((a) => a.name === 'CUDA_VISIBLE_DEVICES')
    .map((a) => ({ value: readVisible(text.slice(a.start, a.end), a.start), start: a.start }))
    .filter((v) => v.value)
    .map((v) => ({ ...v.value!, start: v.start }));
  const launches: TorchrunLaunch[] = [];
  for (const words of commands) {
    const first = launcherEnd(words, assignments);
    if (first < 0) continue;
    const launch: TorchrunLaunch = { launcher: words[first - 1]!, readings: [] };
    const counts = torchrunCounts(words, first, words.length, assignments);
    if (counts.perNode) {
      launch.readings.push(counts.perNode);
      launch.perNode = counts.perNode.value;
    }
    if (counts.nodes) {
      launch.readings.push(counts.nodes);
      [launch.nodes, launch.nodesUnread] = [counts.nodes.value, counts.nodes.value === undefined];
    }
    const perNodeGiven = counts.perNodeNamed;
    // The command's own `CUDA_VISIBLE_DEVICES=… torchrun` wins over an export above it.
    const own = words.slice(0, first).map((w) => assignmentValue(w, 'CUDA_VISIBLE_DEVICES')).find((a) => a);
    const inherited = [...visible].reverse().find((v) => v.start < words[0]!.start);
    const chosen = own ? visible.find((v) => v.start === own.start) : inherited;
    if (chosen) [launch.visible, launch.visibleStart] = [chosen, chosen.start];
    if (!perNodeGiven) {
      // torchrun starts one process per machine unless --nproc_per_node says more (torchrun --help: default 1), however
      // many GPUs CUDA_VISIBLE_DEVICES shows it; the fix adds the option right after the launcher.
      const end = launch.launcher.end;
      [launch.perNode, launch.perNodeDefaulted] = [{ value: 1, range: { start: launch.launcher.start, end }, set: (n) => at(end, end, ` --nproc_per_node=${n}`) }, true];
    }
    if (!launch.nodes && !launch.nodesUnread) {
      // torchrun defaults to one machine; a missing --nnodes can be added right after the launcher.
      const end = launch.launcher.end;
      launch.nodes = { value: 1, range: { start: launch.launcher.start, end }, set: (n) => at(end, end, ` --nnodes=${n}`) };
    }
    launches.push(launch);
  }
  const scan = { launches, visible };
  memo = { text, scan };
  return scan;
}

const torchrunDescribe = (t: { perNode: number | undefined; nodes: number }): string =>
  `--nproc_per_node=${t.perNode}${t.nodes > 1 ? ` --nnodes=${t.nodes}` : ''}`;

export const torchrunReader: ConfigReader = {
  format: 'torchrun',
  detect(fileName, text) {
    return isLaunchScriptName(fileName, text) && /\btorchrun\b|\btorch\.distributed\.(run|launch)\b/.test(text);
  },
  check(fileName, text, plan) {
    const findings: ConfigFinding[] = [];
    for (const l of scanScript(fileName, text).launches) {
      findings.push(...l.readings.flatMap((r) => readingNotes('torchrun', fileName, r)));
      if (l.perNodeDefaulted) findings.push({ format: 'torchrun', severity: 'info', code: 'launch-count-default', range: l.perNode!.range, message: `${l.launcher.raw} without --nproc_per_node starts one process per machine (its default)` });
      const perGpu = l.readings.find((r) => r.perGpu);
      // `gpu`: as many as the machine shows the process (CUDA_VISIBLE_DEVICES' list where it sets one, else the plan's
      // machines have), which the fix writes as a number.
      const gpus = perGpu && (l.visible?.value.length ?? (plan && planTarget(plan).gpusPerNode));
      const perNode = l.perNode ?? (perGpu && gpus ? { value: gpus, range: perGpu.range, set: (n: number) => at(perGpu.range.start, perGpu.range.end, String(n)) } : undefined);
      if (perGpu && plan && !l.visible) findings.push(perGpuFinding('torchrun', perGpu.perGpu!, perGpu.range, plan));
      if (!perNode || l.nodesUnread) continue; // no count given (or computed): nothing WAP can compare
      const launch: LaunchSettings = { perNode, nodes: l.nodes, deviceIds: l.visible };
      findings.push(...checkDeviceIds('torchrun', launch, '--nproc_per_node', 'CUDA_VISIBLE_DEVICES'));
      if (plan) findings.push(...compareLaunch('torchrun', launch, plan, torchrunDescribe));
    }
    // Launches that share one count (nanochat's seven `--nproc_per_node=$NPROC_PER_NODE`) point at the same words: said once.
    return findings.filter((f, i) => findings.findIndex((g) => g.code === f.code && g.range.start === f.range.start && g.message === f.message) === i);
  },
};

export const visibleDevicesReader: ConfigReader = {
  format: 'cuda-visible-devices',
  detect(fileName, text) {
    return isLaunchScriptName(fileName, text) && /CUDA_VISIBLE_DEVICES[ \t]*[:?]?=/.test(text);
  },
  check(fileName, text, plan) {
    if (!plan) return [];
    const scan = scanScript(fileName, text);
    // Lists that feed a torchrun launch are judged with it (torchrun reader); the rest stand alone.
    const used = new Set(scan.launches.filter((l) => l.perNode || l.readings.some((r) => r.perGpu)).map((l) => l.visibleStart));
    return scan.visible
      .filter((v) => !used.has(v.start))
      .flatMap((v) => compareWithPlan(v, plan));
  },
};

function compareWithPlan(visible: ConfigValue<number[]>, plan: PlanReport): ConfigFinding[] {
  return compareLaunch('cuda-visible-devices', { deviceIds: visible }, plan, (t) => `CUDA_VISIBLE_DEVICES lists ${t.perNode ?? t.gpus}`,
    (n) => `CUDA_VISIBLE_DEVICES exposes ${n} GPU${n === 1 ? '' : 's'}`);
}
