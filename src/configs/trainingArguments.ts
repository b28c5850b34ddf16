/**
 * Hugging Face Trainer's configuration as training scripts write it:
 * `TrainingArguments(...)` and the trl configs built on it (SFTConfig,
 * DPOConfig, …), whose keywords the hints read (precision, gradient
 * checkpointing, the optimizer by name), and the precision its flags train in,
 * which the precision hint and the Trainer's config reader share.
 */
import type { Node } from 'web-tree-sitter';
import type { Precision } from '../protocol/plan';
import { guardOf, type CallArgs } from './python';

/** The classes that hold Trainer arguments: transformers' own and trl's configs built on them. */
const CLASSES = '((Seq2Seq)?TrainingArguments|(SFT|DPO|ORPO|KTO|CPO|GRPO|PPO|Reward)Config)';
const TRAINING_ARGUMENTS = new RegExp(`(^|\\.)${CLASSES}$`);
const CALLED_IN_TEXT = new RegExp(`\\b${CLASSES}\\s*\\(`);

/**
 * Whether a file's text names one of those classes at all: called, or handed to HfArgumentParser / TrlParser, as
 * run_clm.py parses its command line into TrainingArguments.
 */
export function namesTrainingArguments(text: string): boolean {
  return NAMED_IN_TEXT.test(text);
}
const NAMED_IN_TEXT = new RegExp(`\\b${CLASSES}\\b`);

/** Whether a file's text calls one of those classes (cheap: no parse), e.g. to detect a Trainer script. */
export function mentionsTrainingArguments(text: string): boolean {
  return CALLED_IN_TEXT.test(text);
}

/** Whether a call builds Trainer arguments and always runs (not behind a flag). */
export function isTrainingArguments(call: Node): boolean {
  const fn = call.childForFieldName('function');
  return !!fn && TRAINING_ARGUMENTS.test(fn.text.replace(/\s+/g, '')) && !guardOf(call);
}

/** A Trainer flag as written: absent (undefined), a literal bool, or decided by the run (an expression, a shell variable). */
export type TrainerFlag = boolean | 'run' | undefined;

/**
 * The precision TrainingArguments' flags train in, and the flag that says it: `bf16` / `fp16` (16-bit autocast),
 * `tf32` (fp32 training, TF32 matmuls), or, with neither 16-bit flag on, the defaults (bf16=False, fp16=False,
 * tf32=None: PyTorch's default, fp32 matmuls since torch 1.12): fp32, `byDefault`. Undefined where the run decides:
 * a flag it sets, or, for the default, `elsewhere` (`**kwargs` that could set a flag, or a DeepSpeed config, whose
 * bf16/fp16 decide). Shared by the Python call and the command line, which read the same arguments.
 */
export function precisionOfFlags(flags: { bf16: TrainerFlag; fp16: TrainerFlag; tf32: TrainerFlag }, elsewhere: boolean): { precision: Precision; flag?: 'bf16' | 'fp16' | 'tf32'; byDefault: boolean } | undefined {
  if (flags.bf16 === true) return { precision: 'bf16', flag: 'bf16', byDefault: false };
  if (flags.fp16 === true) return { precision: 'fp16', flag: 'fp16', byDefault: false };
  if (flags.bf16 === 'run' || flags.fp16 === 'run') return undefined;
  if (flags.tf32 === true) return { precision: 'tf32', flag: 'tf32', byDefault: false };
  if (flags.tf32 === 'run' || elsewhere) return undefined;
  return { precision: 'fp32', flag: flags.bf16 !== undefined ? 'bf16' : flags.fp16 !== undefined ? 'fp16' : undefined, byDefault: true };
}

/**
 * precisionOfFlags for a `TrainingArguments(...)` call: literal True/False keywords, `bf16=args.bf16` decided by
 * the run, and `**kwargs` or `deepspeed=` beside no 16-bit flag leaving the default to the run.
 */
export function trainingArgumentsPrecision(args: CallArgs): { precision: Precision; flag?: Node; byDefault: boolean } | undefined {
  const literal = (key: string): TrainerFlag => {
    const n = args.keywords.get(key);
    return !n ? undefined : n.type === 'true' ? true : n.type === 'false' ? false : 'run';
  };
  const deepspeed = args.keywords.get('deepspeed');
  const splat = args.list.namedChildren.some((a) => a?.type === 'dictionary_splat');
  const read = precisionOfFlags({ bf16: literal('bf16'), fp16: literal('fp16'), tf32: literal('tf32') }, splat || (!!deepspeed && deepspeed.type !== 'none'));
  return read && { precision: read.precision, flag: read.flag && args.keywords.get(read.flag), byDefault: read.byDefault };
}
