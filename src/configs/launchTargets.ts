/**
 * The Python scripts a launch script runs, each with the arguments this launch passes it, and the file each is on
 * disk.
 *
 * A command names its script from the folder the launch is run in: the launch script's own, or, for a launch script
 * kept in a subfolder, a folder above it (DeepSpeed-Chat's training_scripts/single_node/run_1.3b.sh runs `deepspeed
 * main.py` from the step's folder, two above). The nearest folder that holds the file is taken, and said. `-m
 * pkg.module` runs pkg/module.py, or the package's __main__.py, from that folder, which is then on its import path:
 * `from nanochat.gpt import GPT` in nanochat's scripts/base_train.py resolves from the repository root.
 *
 * The arguments are this command's own (not those every launch of the script shares, launchedBy.ts): the words after
 * the script up to a redirection, unquoted, a variable through its one assignment. torchrun, deepspeed and accelerate
 * read their own command line with argparse, which drops the `--` that may separate the script's arguments (nanochat's
 * `-m scripts.base_train -- --depth=20`); python itself hands it on. Words WAP cannot expand (`"$@"`, a list assigned
 * twice) are left out and named, and a `${1:-x}` default taken is named too.
 */
import { baseOf, dirOf, isAbsolutePath, joinPath, normalisePath } from './filePaths';
import { LEVELS } from './launchedBy';
import { isLaunchScriptName, programName, scriptLaunch, type ScriptLaunch } from './launchScripts';
import { findLauncher, launchProcesses, type LaunchProcesses } from './launchWorld';
import { expandedCommands } from './shellExpansion';
import { resolveReference, unquote, type Assignment, type Command, type Word } from './shellWords';
import type { FileAccess } from './types';

export interface LaunchedCommand {
  /** The launcher's program name: torchrun, deepspeed, accelerate, python3… */
  launcher: string;
  /** The script as a path from the folder the launch runs in (`pkg/module.py` for `-m pkg.module`). */
  path: string;
  /** `-m pkg.module` as written. */
  module?: string;
  /** Where the script word is written. */
  at: { start: number; end: number };
  /** The arguments this command passes the script, as its argv holds them. */
  argv: string[];
  /** Words passed to the script that WAP cannot expand (`"$@"`): what they set is the run's. */
  unread: string[];
  /** Variables with no one value in the launch script (set twice, or by the environment), passed on as written. */
  asWritten: string[];
  /** `${…:-default}` expansions read at their default, in the script's name, its arguments or the launcher's options. */
  defaults: string[];
  /** The processes the launcher starts, where it says (launchWorld.ts). */
  processes?: LaunchProcesses;
}

/** The words after the script up to a redirection, as the script's argv holds them; the defaults taken on the way. */
export function scriptArgv(words: Command, launch: ScriptLaunch, assignments: Assignment[]): { argv: string[]; defaults: string[]; asWritten: string[] } {
  const argv: string[] = [];
  const defaults: string[] = [];
  const asWritten: string[] = [];
  let rest = words.slice(launch.script + 1);
  // torchrun, deepspeed and accelerate take the script's arguments as argparse's REMAINDER, which drops a first `--`.
  if (findLauncher(words, launch.launcher, launch.script) && rest[0]?.raw === '--') rest = rest.slice(1);
  for (const w of rest) {
    if (/^\d*[<>]/.test(w.raw)) break;
    if (w.defaultOf) defaults.push(w.defaultOf);
    const v = unquote(w.raw, w.start);
    // `$VAR`, or an option's `--run=$VAR`: through the variable's one assignment.
    const [, option = '', reference] = /^(-[^=\s]*=)?(\$.*)$/.exec(v.value) ?? [];
    const resolved = reference ? resolveReference(unquote(reference, 0).value, v.start + option.length, assignments) : undefined;
    if (resolved?.defaultOf) defaults.push(resolved.defaultOf);
    if (reference && !resolved) asWritten.push(reference);
    argv.push(resolved ? option + resolved.value : v.value);
  }
  return { argv, defaults, asWritten };
}

/** `${…:-default}` expansions among the launcher's own words (`--nproc_per_node=${2:-4}`) and the script's name. */
function launcherDefaults(words: Command, launch: ScriptLaunch, assignments: Assignment[]): string[] {
  const out: string[] = [];
  for (const w of words.slice(launch.launcher, launch.script + 1)) {
    if (w.defaultOf) out.push(w.defaultOf);
    const value = unquote(w.raw.replace(/^-[^=]*=/, ''), 0).value;
    const resolved = value.startsWith('$') ? resolveReference(value, 0, assignments) : undefined;
    if (resolved?.defaultOf) out.push(resolved.defaultOf);
  }
  return out;
}

const optional = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> => (value === undefined ? {} : ({ [key]: value } as Record<K, V>));

/** Every command of a launch script that runs a Python script, in order. */
export function launchedCommands(fileName: string, text: string): LaunchedCommand[] {
  if (!isLaunchScriptName(fileName, text)) return [];
  const { commands, assignments } = expandedCommands(fileName, text);
  const out: LaunchedCommand[] = [];
  for (const { words, unread } of commands) {
    const launch = scriptLaunch(words);
    if (!launch) continue;
    const scriptWord: Word = words[launch.script]!;
    const { argv, defaults, asWritten } = scriptArgv(words, launch, assignments);
    const unreadHere = unread.filter((w) => w.start > scriptWord.start).map((w) => w.raw);
    out.push({
      launcher: programName(words[launch.launcher]!.raw), path: launch.path, ...(launch.module ? { module: launch.module } : {}),
      at: { start: scriptWord.start, end: scriptWord.end },
      argv, unread: unreadHere, asWritten: [...new Set(asWritten)].filter((w) => !unreadHere.includes(w)),
      defaults: [...new Set([...launcherDefaults(words, launch, assignments), ...defaults])],
      ...optional('processes', launchProcesses(words, launch.launcher, launch.script, assignments)),
    });
  }
  return out;
}

/** A launched script found on disk: the file, the folder the launch runs in, and how many folders above the launch script that is. */
export interface LocatedScript {
  file: string;
  workDir: string;
  up: number;
}

const FOLDERS = ['the launch script’s folder', 'the folder above it', 'two folders above it', 'three folders above it'];

/** Where the launch runs from, in words, when it is not the launch script's own folder. */
export const workDirText = (located: LocatedScript): string => FOLDERS[located.up] ?? `${located.up} folders above it`;

/**
 * The file a launch of `launched` in `launchFile` runs: from the launch script's folder, else the nearest folder above
 * it that holds the path (as far up as launchedBy.ts reads launches of a passed file from). An absolute path stands.
 */
export function locateLaunchedScript(launchFile: string, launched: Pick<LaunchedCommand, 'path' | 'module'>, io: FileAccess): LocatedScript | undefined {
  const candidates = [launched.path, ...(launched.module ? [`${launched.module.replace(/\./g, '/')}/__main__.py`] : [])];
  if (isAbsolutePath(launched.path)) return io.read(launched.path) !== undefined ? { file: launched.path, workDir: dirOf(launched.path), up: 0 } : undefined;
  let dir = dirOf(launchFile);
  for (let up = 0; up <= LEVELS.argument; up++) {
    for (const rel of candidates) {
      const file = joinPath(dir, rel);
      if (io.read(file) !== undefined) return { file, workDir: dir, up };
    }
    const parent = dirOf(dir);
    if (parent === dir || parent === '.' || parent === '') break;
    dir = parent;
  }
  return undefined;
}

/** One launch's command that runs a given script, where it found it, and how many of the launch script's commands run it. */
export type LaunchOfScript = LaunchedCommand & { located: LocatedScript; runs: number };

/**
 * The command of the launch script `launchFile` that runs `scriptFile` (its first), with the arguments it passes,
 * what WAP could not read in them and the defaults it took; undefined when none runs it.
 */
export function launchOfScript(launchFile: string, text: string, scriptFile: string, io: FileAccess): LaunchOfScript | undefined {
  const target = normalisePath(scriptFile);
  const runs: LaunchOfScript[] = [];
  for (const c of launchedCommands(launchFile, text)) {
    const located = locateLaunchedScript(launchFile, c, io);
    if (located && normalisePath(located.file) === target) runs.push({ ...c, located, runs: 0 });
  }
  return runs[0] && { ...runs[0], runs: runs.length };
}

/** "run_ds.sh's deepspeed launch of main.py (-a resnet50 …)": how the comparing line names the arguments read. */
export function launchArgumentsText(launchFile: string, launch: LaunchOfScript): string {
  const name = baseOf(launchFile);
  const first = launch.runs > 1 ? ` (the first of its ${launch.runs} launches of it)` : '';
  const unread = launch.unread.length ? `; ${launch.unread.join(' ')} not read` : '';
  const written = launch.asWritten.length ? `; ${launch.asWritten.join(' ')} as written (no one value in ${name})` : '';
  const defaults = launch.defaults.length ? `; ${launch.defaults.join(', ')} at ${launch.defaults.length === 1 ? 'its default' : 'their defaults'}` : '';
  return `${name}'s ${launch.launcher} command${first}${launch.argv.length ? `: ${launch.argv.join(' ')}` : ' (no arguments)'}${unread}${written}${defaults}`;
}

/**
 * The command line the launch that runs the compared model passes it: the config itself where it is that launch
 * script (`wap config run_ds_fp16_z1.sh`, with `--model main.py` too), else the launch that names the config
 * (`target.launch`); with the folder a `-m` launch runs in, and how the CLI says it. Paths as the caller's FileAccess reads them.
 */
export function launchArgumentsOfModel(configFile: string, text: string, target: { file: string; launch?: string }, io: FileAccess): { words: string[]; source: string; importRoot?: string; said: string } | undefined {
  const launchFile = target.launch ?? configFile;
  const body = normalisePath(launchFile) === normalisePath(configFile) ? text : io.read(launchFile);
  const run = body === undefined ? undefined : launchOfScript(launchFile, body, target.file, io);
  if (!run) return undefined;
  return { words: run.argv, source: baseOf(launchFile), ...(run.module ? { importRoot: run.located.workDir } : {}), said: launchArgumentsText(launchFile, run) };
}
