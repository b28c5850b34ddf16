/**
 * Hugging Face Trainer arguments on a launch command line: real projects rarely write `TrainingArguments(...)`;
 * their scripts parse it with HfArgumentParser from the words a launch script passes,
 *   deepspeed --num_gpus 8 run_clm.py --deepspeed ds_z3.json --bf16 --per_device_train_batch_size 4 …
 * Each launching command is read as a training setup by trainerArgumentSetup.ts, which a YAML/JSON recipe shares:
 * bf16/fp16/tf32, `--fsdp "full_shard auto_wrap"` (fsdpWords.ts), `--gradient_checkpointing` (full recompute),
 * per_device_train_batch_size (default 8) and gradient_accumulation_steps (default 1), `--deepspeed ds.json`
 * handing ZeRO and offload to the JSON (linkedConfig.ts), and the GPUs from the launcher (launchWorld.ts). A command
 * that also passes a recipe (`run_sft.py recipe.yaml --bf16`, `--config recipe.yaml`) states only what it writes:
 * the recipe holds the rest, and trainerRecipe.ts reads it.
 * A plain DeepSpeed script's `--deepspeed_config ds.json` (DeepSpeed's own argparse) states the JSON's setup alone.
 * Values that are shell variables are the run's choice: not stated. Fixes edit the words (shellEdits.ts).
 */
import { stringToBool } from '../core/stringToBool';
import { acceleratePluginConfig, launcherSharding, launchWorld } from './launchWorld';
import { withLinkedConfig } from './linkedConfig';
import { isLaunchScriptName, scriptLaunch } from './launchScripts';
import { compareSetup, setupNotes, type StatedSetup } from './setup';
import { dropArgument, insertAfter } from './shellEdits';
import { baseOf, dirOf, joinPath } from './filePaths';
import { expandedCommands } from './shellExpansion';
import { findAssignments, isMakefileName, splitCommands, unquote, type Command, type Word } from './shellWords';
import { readArgumentSetup, shardedByLauncher, type ArgumentSource } from './trainerArgumentSetup';
import { namesTrainingArguments, type TrainerFlag } from './trainingArguments';
import type { ConfigFinding, ConfigReader, FileAccess, TextRange } from './types';

/** The Trainer-only options that make a command a Trainer launch (cheap: the detector looks for these words). */
const TRAINER_OPTIONS = /(^|\s)--(per[_-]device[_-]train[_-]batch[_-]size|gradient[_-]accumulation[_-]steps|fsdp)(?=[\s=]|$)|(^|\s)--deepspeed(=|[ \t]+)["']?[^\s"'-][^\s"']*\.json\b|(^|\s)--deepspeed[_-]config(?=[\s=])/m;

/** The label of a setup read from a launch command's Trainer arguments. */
export const TRAINER_COMMAND_LINE = 'Hugging Face Trainer command line';

/** One `--name [value]` after the script, as written. */
interface Arg {
  /** Normalised: no dashes in front, `-` as `_` (HfArgumentParser takes both spellings). */
  name: string;
  /** The option's own characters (`--fp16`), for renaming it. */
  option: TextRange;
  /** The value without its quotes, and the span of that value and of the whole value word. */
  value?: { text: string; inner: TextRange; word: TextRange; quote: string };
  /** Where the argument ends (its value word, else the option). */
  end: number;
}

/** A redirection (`> log`, `2>&1`) ends the arguments. */
const isRedirection = (raw: string): boolean => /^\d*[<>]/.test(raw);
/** An option word: `-x`/`--x`, not a negative number. */
const isOption = (raw: string): boolean => /^-(?!\d)/.test(raw);
/** A value the shell computes when the command runs. */
const byRun = (value: string): boolean => /[$`]/.test(value);

/** The script's arguments: argparse takes the word after an option as its value unless it is an option itself. */
function scriptArgs(words: Command, script: number): Arg[] {
  const args: Arg[] = [];
  for (let i = script + 1; i < words.length && !isRedirection(words[i]!.raw); i++) {
    const w = words[i]!;
    if (!isOption(w.raw)) continue; // a positional argument
    const eq = w.raw.indexOf('=');
    const optionEnd = w.start + (eq < 0 ? w.raw.length : eq);
    let valueWord: Word | undefined;
    if (eq >= 0) valueWord = { raw: w.raw.slice(eq + 1), start: optionEnd + 1, end: w.end };
    else if (words[i + 1] && !isOption(words[i + 1]!.raw) && !isRedirection(words[i + 1]!.raw)) valueWord = words[++i]!;
    const arg: Arg = { name: w.raw.slice(0, optionEnd - w.start).replace(/^-+/, '').replace(/-/g, '_'), option: { start: w.start, end: optionEnd }, end: valueWord?.end ?? optionEnd };
    if (valueWord) {
      const v = unquote(valueWord.raw, valueWord.start);
      arg.value = { text: v.value, inner: { start: v.start, end: v.end }, word: { start: valueWord.start, end: valueWord.end }, quote: v.start > valueWord.start ? valueWord.raw[0]! : '' };
    }
    args.push(arg);
  }
  return args;
}


/**
 * A bool as HfArgumentParser reads it (string_to_bool): alone it is True (`nargs="?"`, `const=True`), else its
 * word; a variable or a word argparse refuses is left to the run. tf32 (Optional[bool], default None) takes no
 * bare form: argparse wants its value.
 */
function boolOf(arg: Arg | undefined): TrainerFlag {
  if (!arg) return undefined;
  if (!arg.value) return arg.name === 'tf32' ? 'run' : true;
  return stringToBool(arg.value.text) ?? 'run';
}

/** A whole number from 1 as written; undefined for a variable, a missing value or a word argparse refuses. */
function countOf(arg: Arg): number | undefined {
  const text = arg.value?.text ?? '';
  return /^0*[1-9]\d*$/.test(text) ? Number(text) : undefined;
}

/** A recipe the script loads (`run_sft.py recipe.yaml`, TrlParser's `--config recipe.yaml`): it holds every argument the command leaves out. */
function passesRecipe(words: Command, script: number, args: Arg[]): boolean {
  const first = words[script + 1]?.raw;
  const recipe = (path: string | undefined): boolean => !!path && /\.(ya?ml|json)$/i.test(unquote(path, 0).value);
  return (!!first && !isOption(first) && !isRedirection(first) && recipe(first)) || recipe(args.filter((a) => a.name === 'config').pop()?.value?.text);
}

/** The setup one Trainer command states, or undefined when the command passes no Trainer option. */
function readCommand(text: string, words: Command, launch: { launcher: number; script: number }, world: number | undefined): StatedSetup | undefined {
  const args = scriptArgs(words, launch.script);
  // argparse keeps the last of a repeated option.
  const last = (name: string): Arg | undefined => args.filter((a) => a.name === name).pop();
  const script = words[launch.script]!;
  const anchor: TextRange = { start: script.start, end: script.end };
  const deepspeed = last('deepspeed');
  const trainer = ['per_device_train_batch_size', 'gradient_accumulation_steps', 'fsdp'].some((n) => last(n)) || !!deepspeed?.value;
  if (!trainer) {
    // DeepSpeed's own argparse (`--deepspeed --deepspeed_config ds.json`): the JSON holds the setup.
    const config = last('deepspeed_config');
    if (!config?.value || byRun(config.value.text)) return undefined;
    return { label: 'DeepSpeed launch', anchor, world, inexpressible: {}, link: { path: config.value.text, range: config.value.inner, key: '--deepspeed_config' } };
  }
  const read = readArgumentSetup(commandSource(text, words, launch.script, anchor, args, last), TRAINER_COMMAND_LINE);
  const sharding = launcherSharding(words, launch.launcher, launch.script);
  const launcher = words[launch.launcher]!;
  // accelerate's own config decides what the arguments leave at their defaults: read with it (linkedConfig.ts).
  const pluginConfig = read.shardingByDefault && !read.link ? acceleratePluginConfig(words, launch.launcher, launch.script) : undefined;
  const stated = pluginConfig
    ? { ...read, link: { path: pluginConfig.path, range: pluginConfig.range, key: 'accelerate launch --config_file', format: 'accelerate' as const } }
    : sharding ? shardedByLauncher(read, `launched with ${sharding}`, { start: launcher.start, end: launcher.end }) : read;
  stated.world = world;
  // The Trainer has no model-parallel degree: every GPU is a data-parallel replica, so the global batch is known.
  if (world !== undefined) stated.dataParallel = { value: world, stated: true, range: anchor };
  return stated;
}

/**
 * One command's script arguments as an ArgumentSource. A missing option goes right after the script word, on its
 * line, so it stays inside the command across `\` continuations; a bool written alone is written alone (`--bf16`),
 * with `True` only where the next word would otherwise be taken as its value.
 */
function commandSource(text: string, words: Command, script: number, anchor: TextRange, args: Arg[], last: (name: string) => Arg | undefined): ArgumentSource {
  const after = words[script]!.end;
  const next = words[script + 1]?.raw;
  const bareOk = next === undefined || isOption(next) || isRedirection(next);
  const bool = (name: string): TrainerFlag => boolOf(last(name));
  return {
    text, anchor, unsetIsDefault: !passesRecipe(words, script, args), where: 'on the command line', namesDeepSpeed: '--deepspeed',
    has: (name) => !!last(name),
    bool,
    count: (name) => {
      const arg = last(name);
      return arg && countOf(arg);
    },
    nameRange: (name) => last(name)?.option,
    valueRange: (name) => {
      const arg = last(name);
      return arg && (arg.value?.inner ?? arg.option);
    },
    fsdp: () => {
      const fsdp = last('fsdp');
      if (fsdp && (!fsdp.value || byRun(fsdp.value.text))) return undefined; // argparse wants a value; a variable is the run's
      const current = fsdp?.value?.text.split(/\s+/).filter(Boolean) ?? [];
      return {
        words: current, stated: !!fsdp, range: fsdp?.value?.inner,
        write: (words) => {
          if (words.length === 0) return fsdp ? dropArgument(text, fsdp.option.start, fsdp.end) : [];
          if (!fsdp?.value) return insertAfter(after, `--fsdp "${words.join(' ')}"`);
          // The user's quotes stay; several words need some.
          const quote = fsdp.value.quote || (words.length > 1 ? '"' : '');
          return [{ ...fsdp.value.word, newText: `${quote}${words.join(' ')}${quote}` }];
        },
      };
    },
    deepspeed: () => {
      const value = last('deepspeed')?.value;
      if (!value) return undefined;
      return byRun(value.text) ? { byRun: value.word } : { path: value.text, range: value.inner };
    },
    setBool: (name, on) => {
      const arg = last(name);
      if (bool(name) === on) return [];
      if (!arg) return on ? insertAfter(after, bareOk ? `--${name}` : `--${name} True`) : [];
      // A value is rewritten in the user's words; a bare flag switched off goes.
      if (arg.value) return [{ ...arg.value.inner, newText: on ? 'True' : 'False' }];
      return on ? [] : dropArgument(text, arg.option.start, arg.end);
    },
    setNumber: (name, n) => {
      const arg = last(name);
      return arg?.value ? [{ ...arg.value.inner, newText: String(n) }] : insertAfter(after, `--${name} ${n}`);
    },
    rename: (from, to) => {
      const arg = last(from)!;
      return [{ ...arg.option, newText: text.slice(arg.option.start, arg.option.end).replace(from, to) }];
    },
  };
}

/**
 * Whether the script a command launches takes Trainer arguments: a script WAP can read that never names
 * TrainingArguments (an accelerate loop with its own argparse) gives `--per_device_train_batch_size` its own meaning
 * and defaults; one it cannot read is taken at its word.
 */
function launchesTrainer(fileName: string, scriptPath: string, files: FileAccess | undefined): boolean {
  const script = files?.read(joinPath(dirOf(fileName), scriptPath));
  return script === undefined || namesTrainingArguments(script);
}

/** Every command in the script that launches a Python script with Trainer (or DeepSpeed config) arguments. */
export function readTrainerCommands(fileName: string, text: string, files?: FileAccess): StatedSetup[] {
  // `"${ARGS[@]}"` and `$DS_ARGS` hold the arguments in real launch scripts: read them where they are written.
  const { commands, assignments } = expandedCommands(fileName, text);
  const out: StatedSetup[] = [];
  for (const { words, unread } of commands) {
    const launch = scriptLaunch(words);
    if (!launch) continue;
    const setup = readCommand(text, words, launch, launchWorld(words, launch.launcher, launch.script, assignments));
    if (setup?.label === TRAINER_COMMAND_LINE && !launchesTrainer(fileName, launch.path, files)) continue;
    const hidden = unread.filter((w) => w.start > words[launch.script]!.start);
    if (setup && hidden.length) setup.unmodelled = [...(setup.unmodelled ?? []), unreadArguments(hidden, baseOf(launch.path))];
    if (setup) out.push(setup);
  }
  return out;
}

/** Arguments the command passes through words WAP cannot expand: whatever they set is the run's, and the plan may not be. */
function unreadArguments(hidden: Word[], script: string): { range: TextRange; short: string; message: string } {
  const said = hidden.map((w) => w.raw).join(' ');
  return {
    range: { start: hidden[0]!.start, end: hidden[0]!.end },
    short: `${said} not read`,
    message: `${script} is also passed ${said}, which WAP cannot read (the launch script's own arguments, or a variable assigned more than once or appended to): options in it that set the batch, precision, sharding or checkpointing are the run's, and where they do, this config's plan is not the run's`,
  };
}

export const trainerArgvReader: ConfigReader = {
  format: 'hf-trainer-args',
  detect(fileName, text) {
    return isLaunchScriptName(fileName, text) && TRAINER_OPTIONS.test(text);
  },
  check(fileName, text, plan, files) {
    const findings: ConfigFinding[] = [];
    for (const setup of readTrainerCommands(fileName, text, files)) {
      const stated = withLinkedConfig(fileName, setup, files);
      findings.push(...(plan ? compareSetup('hf-trainer-args', text, stated, plan) : setupNotes('hf-trainer-args', stated)));
    }
    return findings;
  },
  readSetup(fileName, text, files) {
    return readTrainerCommands(fileName, text, files)[0];
  },
};
