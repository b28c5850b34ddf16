/**
 * Launch commands that pass a recipe instead of running it as their script, and the GPUs they start:
 * - a training script's arguments name it: `accelerate launch … run_sft.py recipe.yaml`, TrlParser's
 *   `--config recipe.yaml`, LLaMA-Factory's `torchrun … src/train.py recipe.yaml`; the GPUs are the launcher's
 *   (launchWorld.ts);
 * - LLaMA-Factory's CLI takes it: `FORCE_TORCHRUN=1 NNODES=2 NPROC_PER_NODE=8 llamafactory-cli train recipe.yaml`
 *   starts torchrun itself on NNODES (default 1) machines × NPROC_PER_NODE processes, which defaults to the GPUs it
 *   sees: CUDA_VISIBLE_DEVICES' list where the script sets one, else a count only the machine knows;
 * - axolotl runs its own module on the config: `accelerate launch --num_processes 8 -m axolotl.cli.train config.yml`
 *   (the GPUs are the launcher's, read up to `-m`), or its CLI `axolotl train config.yml`, which starts accelerate
 *   with the machine's own accelerate config: a count no script says.
 * Environment words count as the command's own prefix sets them, else as the script assigns them once.
 */
import { launchWorld } from './launchWorld';
import { programName, scriptLaunch } from './launchScripts';
import { assignmentValue, resolveReference, unquote, type Assignment, type Command, type Word } from './shellWords';

export interface RecipeCommand {
  /** The first word that may name the recipe. */
  from: number;
  /** The Python script that loads it, when the command names one (LLaMA-Factory's CLI is its own). */
  script?: number;
  launcher: number;
  world: number | undefined;
}

/** An environment variable for the command at `before` (its launcher): its own `NAME=value` prefix, else the script's. */
function envValue(words: Command, before: number, name: string, assignments: Assignment[]): string | undefined {
  const own = words.slice(0, before).map((w) => assignmentValue(w, name)).find((a) => a);
  const raw = own ? own.value : `$${name}`;
  const value = raw.startsWith('$') ? resolveReference(raw, 0, assignments)?.value : raw;
  return value?.trim();
}

/** `NNODES` × (`NPROC_PER_NODE`, else the GPUs CUDA_VISIBLE_DEVICES lists), as llamafactory-cli reads them. */
function llamaFactoryWorld(words: Command, cli: number, assignments: Assignment[]): number | undefined {
  const whole = (v: string | undefined): number | undefined => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined);
  const nodesRaw = envValue(words, cli, 'NNODES', assignments);
  const nodes = nodesRaw === undefined ? 1 : whole(nodesRaw);
  const visible = envValue(words, cli, 'CUDA_VISIBLE_DEVICES', assignments);
  const perNodeRaw = envValue(words, cli, 'NPROC_PER_NODE', assignments);
  const perNode = perNodeRaw !== undefined ? whole(perNodeRaw) : visible !== undefined && /^\d+(,\d+)*$/.test(visible) ? visible.split(',').length : undefined;
  return nodes !== undefined && perNode !== undefined ? nodes * perNode : undefined;
}

/** A launcher word before axolotl's `-m axolotl.cli.train` (python alone is one process, which it does not say). */
const MODULE_LAUNCHERS = /^(torchrun|accelerate|deepspeed|python[\d.]*)$/;

/** axolotl's training entry points: its module under a launcher, or its CLI's `train`. */
function axolotlCommand(words: Command, assignments: Assignment[]): RecipeCommand | undefined {
  const module = words.findIndex((w, i) => w.raw === '-m' && words[i + 1]?.raw === 'axolotl.cli.train');
  if (module >= 0) {
    const launcher = words.findIndex((w, i) => i < module && !w.raw.startsWith('-') && MODULE_LAUNCHERS.test(programName(w.raw)));
    return launcher < 0 ? undefined : { from: module + 2, launcher, world: launchWorld(words, launcher, module, assignments) };
  }
  const cli = words.findIndex((w) => programName(w.raw) === 'axolotl');
  return cli >= 0 && words[cli + 1]?.raw === 'train' ? { from: cli + 2, launcher: cli, world: undefined } : undefined;
}

/** Where a command may pass a recipe, and the GPUs it starts; undefined for a command that launches no training. */
export function recipeCommand(words: Command, assignments: Assignment[]): RecipeCommand | undefined {
  // axolotl's module is its own, not a script of the user's that loads the recipe: read before `-m` counts as one.
  const axolotl = axolotlCommand(words, assignments);
  if (axolotl) return axolotl;
  const launch = scriptLaunch(words);
  if (launch) return { from: launch.script + 1, script: launch.script, launcher: launch.launcher, world: launchWorld(words, launch.launcher, launch.script, assignments) };
  const cli = words.findIndex((w) => /^(llamafactory-cli|lmf)$/.test(programName(w.raw)));
  if (cli < 0 || words[cli + 1]?.raw !== 'train') return undefined;
  return { from: cli + 2, launcher: cli, world: llamaFactoryWorld(words, cli, assignments) };
}

/** The path a word passes: the word itself, or an option's value (`--config=recipe.yaml`); undefined for a variable. */
export function passedPath(word: Word): string | undefined {
  const value = unquote(word.raw, 0).value;
  const eq = value.indexOf('=');
  if (value.startsWith('-') && eq < 0) return undefined; // an option: its value is the next word
  const path = unquote(value.startsWith('-') ? value.slice(eq + 1) : value, 0).value;
  return path === '' || /[$`]/.test(path) ? undefined : path;
}
