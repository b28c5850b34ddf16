/**
 * The training setup the Hugging Face Trainer's arguments state, read once for every place they are written as
 * names with values: a launch command line (`--bf16 --per_device_train_batch_size 4`, trainerArgv.ts) and a
 * YAML/JSON recipe that HfArgumentParser, TrlParser or LLaMA-Factory load (`bf16: true`, trainerRecipe.ts). Each
 * place reads and writes its own syntax through an `ArgumentSource`; what the values mean is decided here, so the
 * two cannot drift apart:
 * - precision: bf16 / fp16 / tf32 (trainingArguments.ts `precisionOfFlags`), fp32 by default unless a DeepSpeed
 *   config (whose bf16/fp16 then decide) or another file holds the rest;
 * - ZeRO/FSDP: `deepspeed` naming a JSON (a `ConfigLink` transformers checks against these arguments), chosen by the
 *   run, or written inline; else `fsdp`'s words (fsdpWords.ts);
 * - recompute: `gradient_checkpointing` (every decoder layer: full);
 * - micro-batch and accumulation: per_device_train_batch_size (default 8) and gradient_accumulation_steps
 *   (default 1); `auto_find_batch_size` makes the micro-batch a start the run halves until it fits.
 * The Trainer has no tensor, pipeline or context parallel degree (NO_DEGREES). A launcher whose own config shards
 * decides the ZeRO stage and offload the arguments leave unsaid: `accelerate launch --config_file zero3.yaml` is
 * read with that config (a ConfigLink of format 'accelerate'); a plugin chosen by flag (`--use_deepspeed`) leaves
 * them to the search and says so (`shardedByLauncher`).
 */
import { SEQUENCE_LENGTH_NAMES } from '../core/sequenceOptions';
import type { Precision, RecomputeMode, TrainingSetup } from '../protocol/plan';
import { fsdpWordsFor, readFsdpWords, setFsdpDims } from './fsdpWords';
import { trainerFsdpAccumulation } from './unshardedAccumulation';
import type { StatedSetup } from './setup';
import { deepspeedChosenAtRunTime, NO_DEGREES, TRANSFORMERS_CHECKS_DEEPSPEED } from './trainerSetup';
import { precisionOfFlags, type TrainerFlag } from './trainingArguments';
import type { TextEdit, TextRange } from './types';

/** transformers' TrainingArguments default for per_device_train_batch_size. */
const DEFAULT_MICRO_BATCH = 8;

/** `fsdp` as written: its words, and how to write others (no words: the argument goes). */
export interface FsdpArgument {
  words: string[];
  stated: boolean;
  range?: TextRange;
  write(words: string[]): TextEdit[] | undefined;
}

/** `deepspeed`: a JSON by path, a value the run decides, or a config written in place (read by the source's syntax). */
export type DeepSpeedArgument = { path: string; range: TextRange } | { byRun: TextRange } | { inline: (stated: StatedSetup) => void };

/** The Trainer's arguments as one place writes them: read by name, written back in that place's syntax. */
export interface ArgumentSource {
  text: string;
  /** Where a finding about the whole setup, or a default, points. */
  anchor: TextRange;
  /**
   * Whether an argument left out takes transformers' default. False where another file holds the rest: a command
   * line that also passes a recipe (`run_sft.py recipe.yaml --bf16`) states only what it writes.
   */
  unsetIsDefault: boolean;
  /** For messages: where FSDP's words are written ('on the command line') and how a DeepSpeed JSON is named there. */
  where: string;
  namesDeepSpeed: string;
  has(name: string): boolean;
  /** A bool as the parser reads it: absent (undefined), a literal bool, or decided by the run ('run'). */
  bool(name: string): TrainerFlag;
  /** A whole number from 1 as written; undefined when absent or not one (a variable, a word the parser refuses). */
  count(name: string): number | undefined;
  /** The argument's name as written (`--fp16`, `fp16:`), and its value's characters (else the name's). */
  nameRange(name: string): TextRange | undefined;
  valueRange(name: string): TextRange | undefined;
  /** FSDP's words; undefined where the run decides them (a variable, an option still missing its value). */
  fsdp(): FsdpArgument | undefined;
  deepspeed(): DeepSpeedArgument | undefined;
  /**
   * Edits that make a bool say `on` (none when it already does), a count say `n`, a flag set True be another's;
   * undefined where the place cannot be written mechanically.
   */
  setBool(name: string, on: boolean): TextEdit[] | undefined;
  setNumber(name: string, n: number): TextEdit[] | undefined;
  rename(from: string, to: string): TextEdit[] | undefined;
}

/** The setup `source` states, labelled as the caller says; the GPU count is the caller's (its launcher, or the launch script's). */
export function readArgumentSetup(source: ArgumentSource, label: string): StatedSetup {
  const { anchor } = source;
  const stated: StatedSetup = {
    label, anchor,
    inexpressible: { tensorParallel: NO_DEGREES, pipelineStages: NO_DEGREES, contextParallel: NO_DEGREES, sequenceParallel: NO_DEGREES },
  };
  const deepspeed = source.deepspeed();
  if (deepspeed && 'path' in deepspeed) stated.link = { path: deepspeed.path, range: deepspeed.range, key: source.namesDeepSpeed, mustMatch: TRANSFORMERS_CHECKS_DEEPSPEED };
  else if (deepspeed && 'byRun' in deepspeed) deepspeedChosenAtRunTime(stated, source.text, deepspeed.byRun, `${source.namesDeepSpeed} `);
  else if (deepspeed) deepspeed.inline(stated);
  else {
    readFsdp(source, stated);
    stated.shardingByDefault = !source.has('fsdp');
    // Without DeepSpeed the Trainer's ZeRO-2/3 is FSDP (its fsdp words, or the launcher's plugin, linkedConfig.ts),
    // which it accumulates under no_sync unless accelerator_config's sync_each_batch says otherwise: said whether
    // or not these arguments shard, so the plan a fix writes into them is priced as the Trainer will run it.
    stated.unshardedAccumulation = trainerFsdpAccumulation(source.text);
  }

  const flags = { bf16: source.bool('bf16'), fp16: source.bool('fp16'), tf32: source.bool('tf32') };
  // With a DeepSpeed config and no 16-bit flag, its bf16/fp16 decide; with a recipe beside the command line, the recipe's.
  const precision = precisionOfFlags(flags, !!deepspeed || !source.unsetIsDefault);
  if (precision) {
    const flag = precision.flag && source.nameRange(precision.flag);
    stated.precision = { value: precision.precision, stated: source.has('bf16') || source.has('fp16'), range: flag ?? anchor, set: (p) => writePrecision(source, flags, p) };
    const sixteen = precision.precision === 'bf16' || precision.precision === 'fp16';
    // As precisionHint.ts reads TrainingArguments in code: DeepSpeed's engine keeps fp32 masters of 16-bit weights;
    // without it (and without FSDP, whose MixedPrecision policy is its own) accelerate autocasts over fp32 parameters.
    if (sixteen && deepspeed && !('byRun' in deepspeed)) stated.ampStyle = { value: 'master-weights', why: `${precision.precision} with DeepSpeed: fp32 master weights in its optimizer` };
    else if (sixteen && !deepspeed && !source.has('fsdp')) stated.ampStyle = { value: 'autocast', why: `${precision.precision}: the Trainer runs forward under torch.autocast over fp32 parameters` };
  }

  const checkpointing = source.has('gradient_checkpointing');
  const checkpoints = checkpointing ? source.bool('gradient_checkpointing') : source.unsetIsDefault ? false : undefined;
  if (checkpoints !== 'run' && checkpoints !== undefined) {
    stated.recompute = {
      value: checkpoints ? 'full' : 'none', stated: checkpointing, range: source.valueRange('gradient_checkpointing') ?? anchor,
      // transformers checkpoints every decoder layer: any recompute the plan chooses is "on" here.
      matches: (p: RecomputeMode) => (p !== 'none') === checkpoints,
      set: (r) => source.setBool('gradient_checkpointing', r !== 'none'),
    };
  }

  // auto_find_batch_size halves the micro-batch at run time until it fits: the stated one is only a start.
  const autoBatch = source.bool('auto_find_batch_size');
  if (autoBatch === undefined || autoBatch === false) readCount(source, stated, 'microBatch', 'per_device_train_batch_size', DEFAULT_MICRO_BATCH);
  readCount(source, stated, 'gradientAccumulation', 'gradient_accumulation_steps', 1);
  // The first sequence-length argument the place writes with a whole number (TRL's max_seq_length, cutoff_len…).
  for (const name of SEQUENCE_LENGTH_NAMES) {
    const tokens = source.has(name) ? source.count(name) : undefined;
    if (tokens === undefined) continue;
    stated.tokensPerSample = { value: tokens, key: name, range: source.valueRange(name) ?? anchor };
    break;
  }
  // Beside a recipe, a micro-batch without the accumulation makes no known global batch (taking 1 would pin a wrong one).
  if (!source.unsetIsDefault && !stated.gradientAccumulation) delete stated.microBatch;
  return stated;
}

function readCount(source: ArgumentSource, stated: StatedSetup, key: 'microBatch' | 'gradientAccumulation', name: string, byDefault: number): void {
  const given = source.has(name);
  const value = given ? source.count(name) : source.unsetIsDefault ? byDefault : undefined;
  if (value !== undefined) stated[key] = { value, stated: given, range: source.valueRange(name) ?? source.anchor, set: (n) => source.setNumber(name, n) };
}

const SHARDING = ['zeroStage', 'hybridShard', 'cpuOffload', 'paramOffload'] as const;

/**
 * A launcher that shards itself (launchWorld.ts `launcherSharding`) decides the ZeRO stage and offload the arguments
 * leave at their defaults: they are left to the search, and `who` (what launches it how) is said.
 */
export function shardedByLauncher(stated: StatedSetup, who: string, range: TextRange): StatedSetup {
  if (!stated.shardingByDefault) return stated;
  const out: StatedSetup = { ...stated, inexpressible: { ...stated.inexpressible }, shardingByDefault: false };
  for (const key of SHARDING) {
    delete out[key];
    delete out.inexpressible[key];
  }
  // DeepSpeed or FSDP holds the 16-bit tensors its own way: the plain Trainer's autocast is not the run's.
  delete out.ampStyle;
  out.unmodelled = [...(stated.unmodelled ?? []), { range, short: 'sharding set by the launcher, not read', message: `${who}: its DeepSpeed or FSDP settings decide the ZeRO stage and offload, not these arguments, so this config's plan leaves them to the search` }];
  return out;
}

/** `fsdp`'s words: ZeRO stage, hybrid sharding and offload, written back as FSDP's words where it has them. */
function readFsdp(source: ArgumentSource, stated: StatedSetup): void {
  const fsdp = source.fsdp();
  if (!fsdp || (!fsdp.stated && !source.unsetIsDefault)) return;
  setFsdpDims(stated, readFsdpWords(fsdp.words), { stated: fsdp.stated, range: fsdp.range ?? source.anchor }, (s) => {
    const words = fsdpWordsFor(s, fsdp.words);
    return words && fsdp.write(words);
  });
  const expressible = (plan: TrainingSetup): boolean => fsdpWordsFor({ zero: plan.zeroStage, hybrid: plan.hybridShard, offload: plan.cpuOffload, params: plan.paramOffload ?? false }, fsdp.words) !== undefined;
  const instead = `${source.where} the Trainer shards with FSDP's words, which have no ZeRO-1, no optimizer offload without the parameters and no hybrid stage 1; write the plan as a DeepSpeed config (\`wap export --format deepspeed\`) and ${source.namesDeepSpeed === '--deepspeed' ? 'pass it with --deepspeed ds_config.json' : `name it with ${source.namesDeepSpeed} ds_config.json`}`;
  for (const key of SHARDING) {
    stated[key]!.expressible = expressible;
    stated.inexpressible[key] = instead;
  }
}

/**
 * bf16/fp16 as the plan's precision (tf32 and fp32 switch both off); fp8 has no Trainer flag. Swapping one precision
 * flag for the other keeps its place (and its value).
 */
function writePrecision(source: ArgumentSource, flags: { bf16: TrainerFlag; fp16: TrainerFlag }, p: Precision): TextEdit[] | undefined {
  if (p === 'fp8') return undefined;
  const on = p === 'bf16' ? 'bf16' : p === 'fp16' ? 'fp16' : undefined;
  const other = on === 'bf16' ? 'fp16' : on === 'fp16' ? 'bf16' : undefined;
  if (on && other && !source.has(on) && flags[other] === true) return source.rename(other, on);
  const edits = [...(on ? [source.setBool(on, true)] : []), ...(['bf16', 'fp16'] as const).filter((f) => f !== on && flags[f] === true).map((f) => source.setBool(f, false))];
  return edits.every((e) => e !== undefined) ? edits.flat() : undefined;
}
