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

/** Whether a file's text calls one of those classes (cheap: no parse), e.g. to detect a Trainer script. */
export function mentionsTrainingArguments(text: string): boolean {
  return CALLED_IN_TEXT.test(text);
}

/** Whether a call builds Trainer arguments and always runs (not behind a flag). */
export function isTrainingArguments(call: Node): boolean {
  const fn = call.childForFieldName('function');
  return !!fn && TRAINING_ARGUMENTS.test(fn.text.replace(/\s+/g, '')) && !guardOf(call);
}

/**
 * The precision TrainingArguments' keywords train in, and the keyword that says it: `bf16=True` / `fp16=True`
 * (16-bit autocast), `tf32=True` (fp32 training, TF32 matmuls), or, with neither 16-bit flag, the defaults
 * (bf16=False, fp16=False, tf32=None: PyTorch's default, fp32 matmuls since torch 1.12): fp32, `byDefault`.
 * Undefined where the run decides: a flag set by an expression (`bf16=args.bf16`), or, for the default, `**kwargs`
 * that could set a flag or `deepspeed=` (its config's bf16/fp16 decide).
 */
export function trainingArgumentsPrecision(args: CallArgs): { precision: Precision; flag?: Node; byDefault: boolean } | undefined {
  const literal = (key: string): boolean | 'expression' => {
    const n = args.keywords.get(key);
    return !n ? false : n.type === 'true' ? true : n.type === 'false' ? false : 'expression';
  };
  const bf16 = literal('bf16');
  const fp16 = literal('fp16');
  if (bf16 === true) return { precision: 'bf16', flag: args.keywords.get('bf16'), byDefault: false };
  if (fp16 === true) return { precision: 'fp16', flag: args.keywords.get('fp16'), byDefault: false };
  if (bf16 === 'expression' || fp16 === 'expression') return undefined;
  const tf32 = literal('tf32');
  if (tf32 === true) return { precision: 'tf32', flag: args.keywords.get('tf32'), byDefault: false };
  const deepspeed = args.keywords.get('deepspeed');
  const splat = args.list.namedChildren.some((a) => a?.type === 'dictionary_splat');
  if (tf32 === 'expression' || splat || (deepspeed && deepspeed.type !== 'none')) return undefined;
  return { precision: 'fp32', flag: args.keywords.get('bf16') ?? args.keywords.get('fp16'), byDefault: true };
}
