/**
 * DeepSpeed's launcher in launch scripts (`deepspeed [options] train.py …`, `python -m deepspeed.launcher.runner`),
 * format `deepspeed-launch`: how many processes it starts, compared with the plan as torchrun's are. Its options
 * (deepspeed/launcher/runner.py; https://www.deepspeed.ai/getting-started/#resource-configuration-multi-node):
 * - `--num_gpus N` (alias `--num_accelerators`) per machine; absent or -1, one process per GPU the machine has
 *   (DeepSpeedExamples' `deepspeed cifar10_deepspeed.py --deepspeed $@`): counted on the plan's machines, and said;
 * - `--num_nodes N`; absent or -1, every machine of the hostfile, or this one alone without one (`-H/--hostfile`);
 * - `--include host:0,1@host2:0,1` lists the GPUs themselves; `--exclude` leaves the rest of the machine's, which
 *   only the machine knows (said, not compared).
 * The `--deepspeed_config ds.json` the script is passed is the setup's, read by trainerArgv.ts and linkedConfig.ts.
 * A missing count is written right after the launcher by the fix.
 */
import { compareLaunch, planTarget } from './compare';
import { perGpuFinding, readCount, readingNotes, type CountReading } from './launchCounts';
import { isLaunchScriptName, scriptLaunch } from './launchScripts';
import { findLauncher, launcherOptions } from './launchWorld';
import { expandedCommands } from './shellExpansion';
import type { Assignment, Command } from './shellWords';
import type { ConfigFinding, ConfigReader, ConfigValue, LaunchSettings, TextEdit, TextRange } from './types';

/** `deepspeed` as a command's program (at a line's start, after `;`, `&&`, `srun`, a path), or the runner's module. */
const DEEPSPEED_COMMAND = /(^|[\s;&|(])(?:[\w.~/-]*\/)?deepspeed[ \t]+\S|\bdeepspeed\.launcher\.runner\b/m;

interface DeepSpeedLaunch {
  /** The launcher word: where a missing option is added. */
  launcher: { start: number; end: number };
  perNode?: CountReading;
  nodes?: CountReading;
  /** The GPUs --include lists, where every host names its own. */
  include?: { value: number | undefined; range: TextRange };
  /** --exclude, --hostfile without --num_nodes, or a host of --include without its GPUs: the machine decides. */
  undecided?: { why: string; range: TextRange };
}

const insertAfter = (end: number, text: string): TextEdit[] => [{ start: end, end, newText: ` ${text}` }];

/** `localhost:0,1,2@node2:0,1` → 5; a host without its GPU list (all of them) is undefined. */
function includedGpus(value: string): number | undefined {
  let total = 0;
  for (const host of value.replace(/^["']|["']$/g, '').split('@')) {
    const m = /^[^:]+:(\d+(?:,\d+)*)$/.exec(host);
    if (!m) return undefined;
    total += m[1]!.split(',').length;
  }
  return total;
}

function readLaunch(words: Command, assignments: Assignment[]): DeepSpeedLaunch | undefined {
  const launch = scriptLaunch(words);
  const found = launch && findLauncher(words, launch.launcher, launch.script);
  if (!launch || found?.launcher !== 'deepspeed') return undefined;
  const launcherWord = words[found.options - 1]!;
  const out: DeepSpeedLaunch = { launcher: { start: launcherWord.start, end: launcherWord.end } };
  const options = launcherOptions(words, found.options, launch.script);
  const opt = (...names: string[]) => {
    const name = names.find((n) => options.has(n));
    return name === undefined ? undefined : { name, value: options.get(name) };
  };
  const include = opt('include', 'i');
  if (include?.value) {
    const range = { start: include.value.start, end: include.value.start + include.value.raw.length };
    const value = includedGpus(include.value.raw);
    out.include = { value, range };
    if (value === undefined) out.undecided = { why: `--include ${include.value.raw} names a machine without its GPUs (all of them)`, range };
    return out;
  }
  const exclude = opt('exclude', 'e');
  if (exclude?.value) {
    out.undecided = { why: `--exclude ${exclude.value.raw} leaves the rest of each machine's GPUs`, range: { start: exclude.value.start, end: exclude.value.start + exclude.value.raw.length } };
    return out;
  }
  const gpus = opt('num_gpus', 'num_accelerators');
  if (gpus?.value && gpus.value.raw !== '-1') out.perNode = readCount(`--${gpus.name}`, gpus.value.raw, gpus.value.start, assignments);
  const nodes = opt('num_nodes');
  if (nodes?.value && nodes.value.raw !== '-1') out.nodes = readCount('--num_nodes', nodes.value.raw, nodes.value.start, assignments);
  else if (opt('hostfile', 'H')) out.undecided = { why: 'without --num_nodes, every machine of the --hostfile runs it', range: out.launcher };
  return out;
}

function launchesIn(fileName: string, text: string): DeepSpeedLaunch[] {
  const { commands, assignments } = expandedCommands(fileName, text);
  return commands.flatMap(({ words }) => readLaunch(words, assignments) ?? []);
}

const describe = (t: { perNode: number | undefined; nodes: number }): string => `--num_gpus=${t.perNode}${t.nodes > 1 ? ` --num_nodes=${t.nodes}` : ''}`;

/** The launch as compare.ts reads launches: a missing count is the plan machines' GPUs (one machine), added by the fix. */
function settings(l: DeepSpeedLaunch, gpusPerNode: number): LaunchSettings | undefined {
  if (l.include) return l.include.value === undefined ? undefined : { total: { value: l.include.value, range: l.include.range } };
  if (l.perNode && !l.perNode.value) return undefined;
  if (l.nodes && !l.nodes.value) return undefined;
  const end = l.launcher.end;
  const perNode: ConfigValue<number> = l.perNode?.value ?? { value: gpusPerNode, range: l.launcher, set: (n) => insertAfter(end, `--num_gpus=${n}`) };
  const nodes: ConfigValue<number> = l.nodes?.value ?? { value: 1, range: l.launcher, set: (n) => insertAfter(end, `--num_nodes=${n}`) };
  return { perNode, nodes };
}

export const deepspeedLaunchReader: ConfigReader = {
  format: 'deepspeed-launch',
  detect(fileName, text) {
    return isLaunchScriptName(fileName, text) && DEEPSPEED_COMMAND.test(text);
  },
  check(fileName, text, plan) {
    const findings: ConfigFinding[] = [];
    for (const l of launchesIn(fileName, text)) {
      findings.push(...readingNotes('deepspeed-launch', fileName, l.perNode), ...readingNotes('deepspeed-launch', fileName, l.nodes));
      if (l.undecided) findings.push({ format: 'deepspeed-launch', severity: 'info', code: 'launch-count-unread', range: l.undecided.range, message: `${l.undecided.why}: WAP does not compare this launch's GPU count with the plan` });
      if (!plan || l.undecided) continue;
      const launch = settings(l, planTarget(plan).gpusPerNode);
      if (!launch) continue;
      if (!l.include && !l.perNode) findings.push(perGpuFinding('deepspeed-launch', 'deepspeed without --num_gpus', l.launcher, plan));
      findings.push(...compareLaunch('deepspeed-launch', launch, plan, describe));
    }
    return findings;
  },
};
