/**
 * Launch scripts: torchrun (`torchrun`, `python -m torch.distributed.run|launch`)
 * with --nproc_per_node / --nproc-per-node and --nnodes, and CUDA_VISIBLE_DEVICES,
 * in shell scripts, Slurm batch files and Makefile recipes.
 */
import type { PlanReport } from '../protocol/plan';
import { checkDeviceIds, compareLaunch } from './compare';
import { expandedCommands } from './shellExpansion';
import { assignmentValue, isMakefileName, resolveReference, unquote, type Assignment, type Command, type Word } from './shellWords';
import { MalformedConfig, type ConfigFinding, type ConfigReader, type ConfigValue, type LaunchSettings, type TextEdit } from './types';

export function isLaunchScriptName(fileName: string, text: string): boolean {
  return /\.(sh|bash|zsh|ksh|slurm|sbatch|pbs|job)$/i.test(fileName) || isMakefileName(fileName) || /^#!.*\b(ba|z|k)?sh\b/.test(text);
}

/** torchrun options that take no value; every other option is followed by one. */
const FLAG_OPTIONS = new Set(['standalone', 'no_python', 'module', 'm', 'run_path', 'h', 'help']);

interface TorchrunLaunch {
  launcher: Word;
  perNode?: ConfigValue<number>;
  nodes?: ConfigValue<number>;
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

/** Where a command names its launcher (its first: `srun` in `srun torchrun …`) and the Python script that follows it. */
export function scriptLaunch(words: Command): { launcher: number; script: number } | undefined {
  const launcher = words.findIndex((w) => !w.raw.startsWith('--') && LAUNCHERS.test(programName(w.raw)));
  if (launcher < 0) return undefined;
  const script = words.findIndex((w, i) => i > launcher && /\.py["']?$/.test(w.raw) && !w.raw.startsWith('-'));
  return script < 0 ? undefined : { launcher, script };
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

function readNumber(option: string, raw: string, start: number, assignments: Assignment[], allowElastic: boolean): ConfigValue<number> | undefined {
  let v = unquote(raw, start);
  if (v.value.startsWith('$')) {
    const resolved = resolveReference(v.value, v.start, assignments);
    if (!resolved) return undefined; // computed at run time: cannot check
    v = resolved;
  }
  const text = v.value.trim();
  if (/^\d+$/.test(text)) {
    // Only the digits are the value: spaces inside the quotes are the user's and stay.
    const s = v.start + v.value.indexOf(text);
    const e = s + text.length;
    return { value: Number(text), range: { start: s, end: e }, set: (n) => at(s, e, String(n)) };
  }
  if (['gpu', 'auto', 'cpu', 'xpu'].includes(text) || (allowElastic && /^\d+:\d+$/.test(text))) return undefined;
  throw new MalformedConfig(`${option} must be a whole number${option === '--nproc_per_node' ? ' (or gpu/auto)' : ''}, got '${text}'`, { start: v.start, end: v.end });
}

function readVisible(raw: string, start: number): ConfigValue<number[]> | undefined {
  const v = unquote(raw, start);
  if (!/^\d+(,\d+)*$/.test(v.value.trim())) return undefined; // GPU UUIDs, variables, empty: not countable here
  return { value: v.value.split(',').map(Number), range: { start: v.start, end: v.end }, set: (ids) => at(v.start, v.end, ids.join(',')) };
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
    const launch: TorchrunLaunch = { launcher: words[first - 1]! };
    for (let i = first; i < words.length; i++) {
      const w = words[i]!;
      if (!w.raw.startsWith('-')) break; // the training script: its own arguments follow
      const eq = w.raw.indexOf('=');
      const name = (eq < 0 ? w.raw : w.raw.slice(0, eq)).replace(/^-+/, '').replace(/-/g, '_');
      let valueRaw: string | undefined;
      let valueStart = 0;
      if (eq >= 0) [valueRaw, valueStart] = [w.raw.slice(eq + 1), w.start + eq + 1];
      else if (!FLAG_OPTIONS.has(name) && words[i + 1]) [valueRaw, valueStart] = [words[++i]!.raw, words[i]!.start];
      if (valueRaw === undefined) continue;
      if (name === 'nproc_per_node') launch.perNode = readNumber('--nproc_per_node', valueRaw, valueStart, assignments, false);
      if (name === 'nnodes') launch.nodes = readNumber('--nnodes', valueRaw, valueStart, assignments, true);
    }
    // The command's own `CUDA_VISIBLE_DEVICES=… torchrun` wins over an export above it.
    const own = words.slice(0, first).map((w) => assignmentValue(w, 'CUDA_VISIBLE_DEVICES')).find((a) => a);
    const inherited = [...visible].reverse().find((v) => v.start < words[0]!.start);
    const chosen = own ? visible.find((v) => v.start === own.start) : inherited;
    if (chosen) [launch.visible, launch.visibleStart] = [chosen, chosen.start];
    if (!launch.nodes) {
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
      if (!l.perNode) continue; // no count given (or computed): nothing WAP can compare
      const launch: LaunchSettings = { perNode: l.perNode, nodes: l.nodes, deviceIds: l.visible };
      findings.push(...checkDeviceIds('torchrun', launch, '--nproc_per_node', 'CUDA_VISIBLE_DEVICES'));
      if (plan) findings.push(...compareLaunch('torchrun', launch, plan, torchrunDescribe));
    }
    return findings;
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
    const used = new Set(scan.launches.filter((l) => l.perNode).map((l) => l.visibleStart));
    return scan.visible
      .filter((v) => !used.has(v.start))
      .flatMap((v) => compareWithPlan(v, plan));
  },
};

function compareWithPlan(visible: ConfigValue<number[]>, plan: PlanReport): ConfigFinding[] {
  return compareLaunch('cuda-visible-devices', { deviceIds: visible }, plan, (t) => `CUDA_VISIBLE_DEVICES lists ${t.perNode ?? t.gpus}`,
    (n) => `CUDA_VISIBLE_DEVICES exposes ${n} GPU${n === 1 ? '' : 's'}`);
}
