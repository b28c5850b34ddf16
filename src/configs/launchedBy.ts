/**
 * A training script that configures itself in code (`TrainingArguments(...)`, a Lightning `Trainer` without
 * `devices=`) trains on as many GPUs as the launch script that runs it starts: `torchrun --nproc_per_node 8
 * train.py` in run.sh beside it. Without this, "your config" for such a script left the GPU count to the search,
 * and compared the user's setup at a count they do not run.
 *
 * The launch scripts looked at are those in the script's folder and the folder above it (a `scripts/` folder
 * launching `../train.py`, a project root launching `src/train.py`); a command counts when its script word names
 * this file from the launch script's folder. When the scripts that run it disagree, or none says a count, the
 * GPU count stays the search's.
 *
 * A recipe (the Trainer's arguments in YAML or JSON, trainerRecipe.ts) is not run but passed: a command counts when
 * its script's arguments name the file, or `llamafactory-cli train` does (recipeLaunch.ts), from the launch script's
 * folder or, for a path with folders in it, from the project root the job is launched from; launch scripts up to
 * three folders above the recipe are looked at (recipes/<model>/<task>/config.yaml launched from the root). Where
 * every such command hands sharding to accelerate's own config (`--config_file`), that config decides the ZeRO stage
 * and offload a recipe leaves unsaid.
 */
import { baseOf, dirOf, joinPath, normalisePath } from './filePaths';
import { isLaunchScriptName, scriptLaunch } from './launchScripts';
import { withLinkedConfig } from './linkedConfig';
import { acceleratePluginConfig, launcherSharding, launchWorld } from './launchWorld';
import { scriptArgv } from './launchTargets';
import { passedPath, recipeCommand } from './recipeLaunch';
import type { StatedSetup } from './setup';
import { expandedCommands } from './shellExpansion';
import { isMakefileName, unquote, type Assignment, type Command } from './shellWords';
import { shardedByLauncher } from './trainerArgumentSetup';
import type { FileAccess, LaunchedAs } from './types';

/** Folders above the file's own whose launch scripts are read. */
export const LEVELS: Record<LaunchedAs, number> = { script: 1, argument: 3 };

interface Launching {
  /** The launch script's name. */
  launcher: string;
  world: number | undefined;
  /** The Python script that loads a recipe, as a path from the launch script's folder. */
  script?: string;
  /** The launcher's own sharding, as written (`accelerate launch --config_file zero3.yaml`, `--use_deepspeed`). */
  sharding?: string;
  /** accelerate's own config when the launch names one (`--config_file zero3.yaml`), as written. */
  pluginConfig?: string;
  /** A launched script's own arguments, unquoted, a variable through its one assignment (else as written). */
  argv?: string[];
}

/** A file worth reading as a launch script: shell, Slurm and PBS scripts, Makefiles, and extensionless ones (a shebang says). */
const mayLaunch = (entry: string): boolean => isLaunchScriptName(entry, '') || !/\.[^./\\]+$/.test(entry);

/**
 * Whether `path` (as a command writes it) is `target`: from the launch script's folder, or, when it names folders
 * (recipes/x/sft/config.yaml), from wherever above the job is launched.
 */
function names(dir: string, path: string, target: string, fromAbove: boolean): boolean {
  if (normalisePath(joinPath(dir, path)) === target) return true;
  const rel = normalisePath(path);
  return fromAbove && /[\\/]/.test(path) && !rel.startsWith('..') && !rel.startsWith('/') && target.endsWith(`/${rel}`);
}

/** The command's launch of `target`, as a script or with it among the arguments; undefined when it does not launch it. */
function launchOf(words: Command, dir: string, target: string, as: LaunchedAs, assignments: Assignment[]): Omit<Launching, 'launcher'> | undefined {
  if (as === 'script') {
    const launch = scriptLaunch(words);
    if (!launch || !names(dir, launch.path, target, false)) return undefined;
    return { world: launchWorld(words, launch.launcher, launch.script, assignments), argv: scriptArgv(words, launch, assignments).argv };
  }
  const passed = recipeCommand(words, assignments);
  if (!passed || !words.slice(passed.from).some((w) => names(dir, passedPath(w) ?? '', target, true))) return undefined;
  const script = passed.script === undefined ? undefined : unquote(words[passed.script]!.raw, 0).value;
  if (script === undefined) return { world: passed.world };
  return { world: passed.world, script, sharding: launcherSharding(words, passed.launcher, passed.script!), pluginConfig: acceleratePluginConfig(words, passed.launcher, passed.script!)?.path };
}

/** The launch commands in the launch scripts beside `path` (or a folder or a few up) that run or pass it. */
export function launchesOf(path: string, files: FileAccess, as: LaunchedAs = 'script'): Array<Launching & { dir: string }> {
  const target = normalisePath(path);
  const name = baseOf(path);
  const dirs: string[] = [dirOf(path)];
  for (let up = dirOf(dirs[0]!); dirs.length <= LEVELS[as] && up !== '' && !dirs.includes(up); up = dirOf(up)) dirs.push(up);
  const out: Array<Launching & { dir: string }> = [];
  for (const dir of dirs) {
    for (const entry of files.list(dir)) {
      const file = joinPath(dir, entry);
      const text = file === path || !mayLaunch(entry) ? undefined : files.read(file);
      // Cheap before parsing: a launch script that does not even name the file (`-m pkg.train` names it without `.py`).
      if (text === undefined || !text.includes(name.replace(/\.py$/i, '')) || !isLaunchScriptName(file, text)) continue;
      const { commands, assignments } = expandedCommands(file, text);
      for (const { words } of commands) {
        const launch = launchOf(words, dir, target, as, assignments);
        if (launch) out.push({ launcher: entry, dir, ...launch });
      }
    }
  }
  return out;
}

/**
 * The setup with the GPU count of the launch scripts that run (or pass) it, when it states none and they agree on
 * one; for a recipe, also the sharding of a launcher whose own config shards.
 */
export function withLaunchedWorld(path: string, stated: StatedSetup, files: FileAccess | undefined, as: LaunchedAs = 'script'): StatedSetup {
  if (!files || (as === 'script' && (stated.world !== undefined || !/\.py$/i.test(path)))) return stated;
  const launches = launchesOf(path, files, as);
  let out = stated;
  const worlds = new Set(launches.map((c) => c.world));
  const [world] = worlds;
  if (stated.world === undefined && worlds.size === 1 && world !== undefined) out = { ...out, world, worldFrom: launches[0]!.launcher };
  const sharded = launches.length > 0 && launches.every((l) => l.sharding) ? launches[0]! : undefined;
  if (!sharded) return out;
  // One accelerate config every launch names: its plugin is read (linkedConfig.ts), from the launch script's folder.
  const configs = new Set(launches.map((l) => l.pluginConfig && joinPath(l.dir, l.pluginConfig)));
  const [config] = configs;
  if (configs.size === 1 && config !== undefined && out.shardingByDefault && !out.link) {
    return withLinkedConfig(path, { ...out, link: { path: sharded.pluginConfig!, readFrom: config, range: out.anchor, key: `${sharded.launcher}'s accelerate launch --config_file`, format: 'accelerate' } }, files);
  }
  return shardedByLauncher(out, `${sharded.launcher} launches this recipe with ${sharded.sharding}`, out.anchor);
}

/**
 * A command line's options, each with the values that follow it (`-a resnet50`, `--deepspeed`, `--lr=0.1`); words
 * before the first option (positionals) are one group of their own.
 */
function optionGroups(argv: string[]): string[][] {
  const groups: string[][] = [];
  for (const word of argv) {
    const startsOption = /^-[^\d.]/.test(word);
    if (startsOption || groups.length === 0) groups.push([word]);
    else groups[groups.length - 1]!.push(word);
  }
  return groups;
}

/**
 * The arguments the launch scripts beside a Python script run it with (`torchrun … train.py --n_layer 12`), for the
 * argparse it reads them with; undefined when none runs it. Launch scripts that run it with different arguments
 * usually differ in a few options only (DeepSpeedExamples' imagenet: both pass `-a resnet50`, each its own
 * `--deepspeed_config`): the options every one of them passes alike are read, and the source names the others, left
 * at the script's defaults. When they share none, they are named instead: which of them is "the run" is the user's to say.
 */
export function launchedArguments(path: string, files: FileAccess): { words: string[]; source: string; differing?: string[] } | { disagree: string[] } | undefined {
  if (!/\.py$/i.test(path)) return undefined;
  const launches = launchesOf(path, files, 'script').filter((l) => l.argv !== undefined);
  const distinct = new Set(launches.map((l) => JSON.stringify(l.argv)));
  if (distinct.size === 0) return undefined;
  const launchers = [...new Set(launches.map((l) => l.launcher))];
  if (distinct.size === 1) return { words: launches[0]!.argv!, source: launches[0]!.launcher };
  const grouped = launches.map((l) => optionGroups(l.argv!).map((g) => g.join('\u0000')));
  const everywhere = (g: string): boolean => grouped.every((groups) => groups.includes(g));
  const shared = grouped[0]!.filter(everywhere);
  if (shared.length === 0) return { disagree: launchers };
  const differing = [...new Set(grouped.flat().filter((g) => !everywhere(g)).map((g) => g.split('\u0000')[0]!))];
  const words = shared.flatMap((g) => g.split('\u0000'));
  return { words, source: `every launch of it (${launchers.join(', ')})`, differing };
}
