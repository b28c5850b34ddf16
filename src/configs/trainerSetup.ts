/**
 * What a Hugging Face `TrainingArguments(...)` (or a trl config built on it:
 * SFTConfig, DPOConfig…) says about the training setup, and how to write the
 * plan's values back:
 * - precision: `bf16=True` / `fp16=True` (torch autocast), `tf32=True`;
 * - ZeRO/FSDP: `fsdp="full_shard auto_wrap"` (the words of transformers'
 *   FSDPOption: full_shard, shard_grad_op, hybrid_shard, hybrid_shard_zero2,
 *   no_shard, offload) or `deepspeed={...}` written inline; a `deepspeed=`
 *   path holds them in that file, which linkedConfig.ts reads;
 * - offload: FSDP's "offload" (parameters, gradients and optimizer state
 *   together), or the inline dict's offload_optimizer / offload_param;
 * - recompute: `gradient_checkpointing=True` (every decoder layer: full);
 * - micro-batch and accumulation: `per_device_train_batch_size` (default 8)
 *   and `gradient_accumulation_steps` (default 1).
 * The GPU count comes from the launch script that runs the script (launchedBy.ts), not from here.
 */
import type { Node } from 'web-tree-sitter';
import type { Precision, RecomputeMode, ZeroStage } from '../protocol/plan';
import { fsdpWordsFor, readFsdpWords, setFsdpDims, type FsdpSetup } from './fsdpWords';
import { trainerFsdpAccumulation } from './unshardedAccumulation';
import { argsLayout, intLiteral, nodeRange, quoteOf, replaceRange, setKeyword, stringLiteral, type ArgsLayout, type CallArgs } from './python';
import { readInlineDeepSpeed } from './inlineDeepSpeed';
import type { StatedSetup } from './setup';
import { trainingArgumentsPrecision } from './trainingArguments';
import type { TextEdit, TextRange } from './types';

/** transformers' TrainingArguments default for per_device_train_batch_size. */
const DEFAULT_MICRO_BATCH = 8;

export const NO_DEGREES = 'TrainingArguments has no tensor, pipeline or context parallel degree; train that plan with Megatron-LM or torchtitan (`wap export --format megatron` or `--format torchtitan`)';

/** A literal True/False, else undefined (an expression decided at run time). */
function boolLiteral(n: Node | undefined): boolean | undefined {
  if (!n) return undefined;
  return n.type === 'true' ? true : n.type === 'false' ? false : undefined;
}

/** The words of an `fsdp=` value: a string ("full_shard auto_wrap"), a list of strings, or a bool (True is full_shard). */
function fsdpWords(n: Node): { words: string[]; write: (words: string[]) => string } | undefined {
  const b = boolLiteral(n);
  if (b !== undefined) return { words: b ? ['full_shard'] : [], write: (w) => `"${w.join(' ')}"` };
  const s = stringLiteral(n);
  if (s !== undefined) {
    const q = quoteOf(n);
    return { words: s.split(/\s+/).filter(Boolean), write: (w) => `${q}${w.join(' ')}${q}` };
  }
  if (n.type === 'list') {
    const items = n.namedChildren.filter((c): c is Node => !!c && c.type !== 'comment');
    const words = items.map(stringLiteral);
    if (words.some((w) => w === undefined)) return undefined;
    const q = items[0] ? quoteOf(items[0]) : '"';
    return { words: words as string[], write: (w) => `[${w.map((x) => `${q}${x}${q}`).join(', ')}]` };
  }
  return undefined;
}

/** Edits that make bf16/fp16 say `p` (tf32 and fp32 both switch 16-bit autocast off); fp8 has no Trainer flag. */
function writePrecision(text: string, layout: ArgsLayout, flags: { bf16?: boolean; fp16?: boolean }, p: Precision): TextEdit[] | undefined {
  if (p === 'fp8') return undefined;
  const on = p === 'bf16' ? 'bf16' : p === 'fp16' ? 'fp16' : undefined;
  const edits: TextEdit[] = [];
  if (on) edits.push(...setKeyword(text, layout, on, 'True'));
  for (const other of ['bf16', 'fp16'] as const) if (other !== on && flags[other]) edits.push(...setKeyword(text, layout, other, 'False'));
  return edits;
}

/**
 * Reads while the tree is alive; every `set` closure holds offsets and strings only (argsLayout, replaceRange), so
 * the edits stay right after the tree is freed.
 */
export function readTrainerSetup(text: string, args: CallArgs, callee: string): StatedSetup {
  const anchor = nodeRange(args.list);
  const layout = argsLayout(args);
  const kw = (name: string): Node | undefined => args.keywords.get(name);
  const stated: StatedSetup = {
    label: `Hugging Face ${callee}`, anchor,
    inexpressible: { tensorParallel: NO_DEGREES, pipelineStages: NO_DEGREES, contextParallel: NO_DEGREES, sequenceParallel: NO_DEGREES },
  };

  // The precision hint reads the same: a flag set by an expression (bf16=args.bf16), or no flag beside `**kwargs` or
  // `deepspeed=`, is decided per run, and the precision is then not stated here.
  const read = trainingArgumentsPrecision(args);
  if (read) {
    const flags = { bf16: boolLiteral(kw('bf16')), fp16: boolLiteral(kw('fp16')) };
    stated.precision = { value: read.precision, stated: !!(kw('bf16') || kw('fp16')), range: read.flag ? nodeRange(read.flag) : anchor, set: (p) => writePrecision(text, layout, flags, p) };
  }

  readSharding(text, args, layout, stated);

  const checkpointing = kw('gradient_checkpointing');
  const checkpoints = checkpointing ? boolLiteral(checkpointing) : false;
  if (checkpoints !== undefined) {
    stated.recompute = {
      value: checkpoints ? 'full' : 'none', stated: !!checkpointing, range: checkpointing ? nodeRange(checkpointing) : anchor,
      // transformers checkpoints every decoder layer: any recompute the plan chooses is "on" here.
      matches: (p: RecomputeMode) => (p !== 'none') === checkpoints,
      set: (r) => setKeyword(text, layout, 'gradient_checkpointing', r === 'none' ? 'False' : 'True'),
    };
  }

  // auto_find_batch_size halves the micro-batch at run time until it fits: the stated one is only a start.
  if (boolLiteral(kw('auto_find_batch_size')) !== true) {
    const micro = kw('per_device_train_batch_size');
    const microValue = micro ? intLiteral(micro) : DEFAULT_MICRO_BATCH;
    if (microValue !== undefined && microValue >= 1) {
      stated.microBatch = { value: microValue, stated: !!micro, range: micro ? nodeRange(micro) : anchor, set: (n) => setKeyword(text, layout, 'per_device_train_batch_size', String(n)) };
    }
  }
  const accum = kw('gradient_accumulation_steps');
  const accumValue = accum ? intLiteral(accum) : 1;
  if (accumValue !== undefined && accumValue >= 1) {
    stated.gradientAccumulation = { value: accumValue, stated: !!accum, range: accum ? nodeRange(accum) : anchor, set: (n) => setKeyword(text, layout, 'gradient_accumulation_steps', String(n)) };
  }
  return stated;
}

/** Who refuses a DeepSpeed JSON whose micro-batch, accumulation or bf16/fp16 disagree with the Trainer's arguments. */
export const TRANSFORMERS_CHECKS_DEEPSPEED = "transformers (HfTrainerDeepSpeedConfig's check of the DeepSpeed config against TrainingArguments)";

/** A DeepSpeed config the run names (an expression, a shell variable): its stage and offload are left to the search, and said. */
export function deepspeedChosenAtRunTime(stated: StatedSetup, text: string, range: TextRange, key: string): void {
  (stated.unmodelled ??= []).push({ range, short: 'DeepSpeed config chosen at run time', message: `${key}${text.slice(range.start, Math.min(range.end, range.start + 40))} is chosen at run time: its ZeRO stage and offload are unknown to WAP, so this config's plan leaves them to the search` });
}

/**
 * `deepspeed=` written inline as a dict (transformers accepts one for the config file): its ZeRO stage and
 * offloads. "auto" values follow TrainingArguments (transformers' HfTrainerDeepSpeedConfig fills them).
 */
function inlineDeepSpeed(stage: ZeroStage, offload: boolean): string {
  const zero = `{"stage": ${stage}${offload ? ', "offload_optimizer": {"device": "cpu"}' : ''}}`;
  return `{"zero_optimization": ${zero}, "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}`;
}

/**
 * ZeRO stage, hybrid sharding and offload: from `fsdp=` (transformers' FSDPOption words), or from `deepspeed=` written
 * as a dict; a `deepspeed=` path holds them in that file (linkedConfig.ts reads it). The fix writes FSDP
 * words for ZeRO-2/3 (torch's own sharding) and an inline DeepSpeed dict where FSDP has no words: ZeRO-1, and
 * offloading the optimizer state alone (FSDP's offload moves the parameters too).
 */
function readSharding(text: string, args: CallArgs, layout: ArgsLayout, stated: StatedSetup): void {
  const deepspeed = args.keywords.get('deepspeed');
  if (deepspeed && deepspeed.type === 'dictionary') return readInlineDeepSpeed(deepspeed, stated, 'deepspeed=');
  if (deepspeed && deepspeed.type !== 'none') {
    const path = stringLiteral(deepspeed);
    if (path !== undefined) stated.link = { path, range: nodeRange(deepspeed), key: 'deepspeed=', mustMatch: TRANSFORMERS_CHECKS_DEEPSPEED };
    // An expression (args.deepspeed) names the file at run time: which stage it holds is not in this script.
    else deepspeedChosenAtRunTime(stated, text, nodeRange(deepspeed), 'deepspeed=');
    return;
  }
  const fsdp = args.keywords.get('fsdp');
  const read = fsdp ? fsdpWords(fsdp) : { words: [], write: (w: string[]) => `"${w.join(' ')}"` };
  if (!read) return;
  const range = fsdp ? nodeRange(fsdp) : stated.anchor;
  const fsdpOff = (): TextEdit[] => (fsdp ? replaceRange(range, read.write([])) : []);
  const write = (s: FsdpSetup): TextEdit[] | undefined => {
    const words = fsdpWordsFor(s, read.words);
    if (words) return words.length === 0 ? fsdpOff() : fsdp ? replaceRange(range, read.write(words)) : setKeyword(text, layout, 'fsdp', read.write(words));
    // ZeRO-1 and the optimizer state offloaded alone, which FSDP has no words for, as DeepSpeed; DeepSpeed shards over
    // the whole data-parallel group: it has no hybrid stage 1 or 2.
    if (s.zero !== 0 && !s.params && !s.hybrid) return [...fsdpOff(), ...setKeyword(text, layout, 'deepspeed', inlineDeepSpeed(s.zero, s.offload))];
    return undefined;
  };
  setFsdpDims(stated, readFsdpWords(read.words), { stated: !!fsdp, range }, write);
  // The Trainer's ZeRO-2/3 without DeepSpeed is FSDP, accumulated under no_sync unless the script's accelerator_config
  // says sync_each_batch (trainerArgumentSetup.ts says why it is stated even where fsdp is not).
  stated.unshardedAccumulation = trainerFsdpAccumulation(text);
}
