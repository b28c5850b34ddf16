/**
 * Which model a config belongs to, made explicit: the script the config
 * launches (torchrun's script argument, `accelerate launch train.py`,
 * `deepspeed train.py`, a Lightning or Hugging Face Trainer script itself, a plain PyTorch script that
 * wraps its model in FSDP/DDP itself, a launch script next to
 * a YAML/JSON/TOML config that names it, or the script a launch command loads a Trainer recipe with), then the
 * model that script imports
 * from a local module. File access is injected so the room stays pure; the
 * CLI and the LSP server pass their own.
 */
import { baseOf, dirOf, joinPath as join, normalisePath } from './filePaths';
import { launchesOf, LEVELS } from './launchedBy';
import { isLaunchScriptName } from './launchScripts';
import { launchedCommands, locateLaunchedScript, workDirText, type LaunchedCommand } from './launchTargets';
import { isAxolotlConfig, isTrainerRecipe } from './recipeDetect';
import { passedPath } from './recipeLaunch';
import { recipeModelReference } from './trainerRecipe';
import { wrapsModelItself } from './torchNames';
import { mentionsTrainingArguments } from './trainingArguments';
import { expandedCommands } from './shellExpansion';
import type { FileAccess } from './types';

export interface ModelTarget {
  /** The model source file. */
  file: string;
  /** The model class or builder the script uses, when it names one. */
  modelName?: string;
  /** How WAP found it, for the diagnostic: "imported by train.py, which launch.sh runs with torchrun". */
  how: string;
  /** The launch script whose command runs `file` (the config itself, or the launch that names it): its arguments are the run's. */
  launch?: string;
  /** The folder a `-m pkg.module` launch runs in, on the script's import path. */
  importRoot?: string;
}

export type { FileAccess };


/** Python scripts a launch script runs, as written (relative to the script's folder), with the launcher's name. */
export function launchedScripts(fileName: string, text: string): Array<{ script: string; launcher: string }> {
  if (/\.py$/i.test(fileName)) {
    // A script that configures its own trainer is its own launcher: Hugging Face's TrainingArguments, Lightning's
    // Trainer, or a plain PyTorch loop that wraps its model in FSDP/DDP itself.
    if (mentionsTrainingArguments(text)) return [{ script: fileName, launcher: 'Hugging Face Trainer' }];
    if (wrapsModelItself(text)) return [{ script: fileName, launcher: 'PyTorch' }];
    return /\bTrainer\s*\(/.test(text) ? [{ script: fileName, launcher: 'Lightning' }] : [];
  }
  return launchedCommands(fileName, text).map((c) => ({ script: c.path, launcher: c.launcher }));
}

/** Whether a launch script refers to the config file by name (--config_file x.yaml, --deepspeed ds.json, --job.config_file x.toml). */
export function configMentioned(scriptText: string, configBaseName: string): boolean {
  return new RegExp(`(^|[\\s=/"'])${configBaseName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=$|[\\s"';)])`, 'm').test(scriptText);
}

/** `from llama import LlamaForCausalLM, Lit` / `import llama` lines: module and imported names. */
export function localModelImports(text: string): Array<{ module: string; names: string[] }> {
  const out: Array<{ module: string; names: string[] }> = [];
  for (const m of text.matchAll(/^from[ \t]+(\.?[\w.]+)[ \t]+import[ \t]+(?:\(([\w\s,]+)\)|([\w \t,]+))/gm)) {
    out.push({ module: m[1]!.replace(/^\./, ''), names: (m[2] ?? m[3]!).split(',').map((n) => n.trim().split(/\s+as\s+/)[0]!).filter(Boolean) });
  }
  for (const m of text.matchAll(/^import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+\w+)?[ \t]*$/gm)) out.push({ module: m[1]!, names: [] });
  return out;
}

/** The model a script builds: a class it imports from a local module and calls, else the script itself. */
function modelOfScript(scriptPath: string, io: FileAccess, how: string): ModelTarget | undefined {
  const text = io.read(scriptPath);
  if (text === undefined) return undefined;
  // A script that sizes its model from the run (argparse, nanoGPT's exec'd configurator, Hydra, LightningCLI) is read
  // itself, with the launch's arguments: the class it imports, at its defaults, is not the model the run trains.
  if (READS_THE_RUN.test(text)) return { file: scriptPath, how: how.replace(/^which /, '') };
  const dir = dirOf(scriptPath);
  for (const imp of localModelImports(text)) {
    const rel = imp.module.replace(/\./g, '/');
    const file = [join(dir, `${rel}.py`), join(dir, `${rel}/__init__.py`)].find((f) => io.read(f) !== undefined);
    if (!file) continue; // torch, transformers…: not the user's code
    // A class the script builds through a classmethod (`Transformer.from_model_args(args)`, pytorch/examples'
    // tensor_parallelism) is built as only the script says: the script is read. A module it only takes helpers from
    // (`from log_utils import rank_log`) is not the model's.
    if (imp.names.some((n) => /^[A-Z]/.test(n) && new RegExp(`\\b${n}\\.\\w+\\s*\\(`).test(text))) break;
    const called = imp.names.filter((n) => /^[A-Z]/.test(n) && new RegExp(`\\b${n}\\s*\\(`).test(text));
    if (called.length === 0 && imp.names.length > 0) continue;
    return { file, ...(called[0] ? { modelName: called[0] } : {}), how: `imported by ${baseOf(scriptPath)}, ${how}` };
  }
  return { file: scriptPath, how: how.replace(/^which /, '') };
}

const READS_THE_RUN = /\b(argparse|HfArgumentParser|TrlParser|sys\.argv|LightningCLI|hydra\.main|exec\s*\(\s*open)\b/;

/**
 * The model for a config, found through the script it launches; undefined
 * when no launching script names it (then `wap.model`, then ask the user).
 */
export function resolveLaunchedModel(configPath: string, text: string, io: FileAccess, hops = 0): ModelTarget | undefined {
  const dir = dirOf(configPath);
  if (/\.py$/i.test(configPath)) {
    const [own] = launchedScripts(configPath, text);
    if (own) return modelOfScript(configPath, io, `the ${own.launcher} script ${baseOf(configPath)}`);
  }
  const fromLaunch = modelOfLaunches(configPath, launchedCommands(configPath, text), io, `which ${baseOf(configPath)} runs with`);
  if (fromLaunch) return fromLaunch;
  const name = baseOf(configPath);
  // A recipe of the Trainer's arguments: the script a launch command loads it with, beside it or from a folder above
  // (recipes/<model>/sft/config.yaml launched from the project root). Its `model_name_or_path` names a hub model,
  // not code: a command that only hands it to `llamafactory-cli` leads to no model. An axolotl config is run by
  // axolotl's own module (no script of the user's) and names its model as `base_model`.
  const axolotl = isAxolotlConfig(configPath, text);
  if (axolotl || isTrainerRecipe(configPath, text)) {
    for (const launch of launchesOf(configPath, io, 'argument')) {
      const found = launch.script && modelOfScript(join(launch.dir, launch.script), io, `which ${launch.launcher} runs with ${name}`);
      if (found) return found;
    }
    // No script of the user's builds it: the model the recipe names, where its config.json is on disk (a folder, the
    // hub cache), which WAP builds as from_pretrained would.
    const named = namedModel(configPath, text);
    const config = named && io.pretrainedConfig?.(named.ref, configPath);
    if (named && config) return { file: config, how: `${named.key} ${named.ref} in ${name}` };
  }
  // A YAML/JSON/TOML config: the launch script beside it that passes it by name.
  const naming: Array<{ sibling: string; path: string; body: string }> = [];
  for (const sibling of io.list(dir)) {
    const path = join(dir, sibling);
    if (path === configPath) continue;
    const body = io.read(path);
    if (body === undefined || !configMentioned(body, name)) continue;
    const launched = launchedCommands(path, body);
    const found = modelOfLaunches(path, launched, io, `which ${sibling} runs with`, ` and ${name}`);
    if (found) return found;
    if (launched.length === 0 && CONFIG_FILE.test(sibling)) naming.push({ sibling, path, body });
  }
  // A config in a subfolder (imagenet/config/ds_fp16_z1_config.json) that a launch script above passes by its path
  // from there (`--deepspeed_config config/ds_fp16_z1_config.json`): the script that command runs.
  const above = modelOfLaunchesAbove(configPath, io);
  if (above) return above;
  // A config that another config names (accelerate's deepspeed_config_file: ds_z3.json): that config's model, one hop.
  for (const { sibling, path, body } of hops === 0 ? naming : []) {
    const found = resolveLaunchedModel(path, body, io, hops + 1);
    if (found) return { ...found, how: `${found.how}; ${sibling} names ${name}` };
  }
  return undefined;
}

/** The model of the first of `launched` (commands of `launchPath`) whose script is on disk. */
function modelOfLaunches(launchPath: string, launched: LaunchedCommand[], io: FileAccess, how: string, passing = ''): ModelTarget | undefined {
  for (const c of launched) {
    const located = locateLaunchedScript(launchPath, c, io);
    if (!located) continue;
    const from = located.up > 0 ? ` from ${workDirText(located)}` : '';
    const found = modelOfScript(located.file, io, `${how} ${c.launcher}${passing}${from}`);
    if (!found) continue;
    // The launch's arguments are the run's where the script it runs is the model file itself (it reads them).
    return { ...found, ...(found.file === located.file ? { launch: launchPath } : {}), ...(c.module ? { importRoot: located.workDir } : {}) };
  }
  return undefined;
}

/** The launch scripts in the folders above a config (as far up as launchedBy.ts looks) whose commands pass its path. */
function modelOfLaunchesAbove(configPath: string, io: FileAccess): ModelTarget | undefined {
  const target = normalisePath(configPath);
  const name = baseOf(configPath);
  let dir = dirOf(configPath);
  for (let up = 1; up <= LEVELS.argument; up++) {
    const parent = dirOf(dir);
    if (parent === dir || parent === '.' || parent === '') return undefined;
    dir = parent;
    for (const entry of io.list(dir)) {
      const path = join(dir, entry);
      const body = isLaunchScriptName(entry, '') ? io.read(path) : undefined;
      if (body === undefined || !body.includes(name)) continue;
      const { commands } = expandedCommands(path, body);
      const passing = commands.filter(({ words }) => words.some((w) => {
        const passed = passedPath(w);
        return passed !== undefined && normalisePath(join(dir, passed)) === target;
      }));
      if (passing.length === 0) continue;
      const launched = launchedCommands(path, body).filter((c) => passing.some(({ words }) => words.some((w) => w.start === c.at.start)));
      const found = modelOfLaunches(path, launched, io, `which ${entry} runs with`, ` and ${configPath.slice(dir.length + 1)}`);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * The model a recipe or an axolotl config names itself (`model_name_or_path`, `base_model`), as written: what to
 * say when its config.json is not on disk and no script of the user's builds it.
 */
export function namedModel(configPath: string, text: string): { ref: string; key: string } | undefined {
  const axolotl = isAxolotlConfig(configPath, text);
  if (!axolotl && !isTrainerRecipe(configPath, text)) return undefined;
  return recipeModelReference(configPath, text, axolotl ? 'base_model' : 'model_name_or_path');
}

/** Files that are configs, not scripts: what may name another config by path. */
const CONFIG_FILE = /\.(ya?ml|jsonc?|toml)$/i;
