/**
 * Hugging Face Trainer's configuration as training scripts write it:
 * `TrainingArguments(...)` and the trl configs built on it (SFTConfig,
 * DPOConfig, …), whose keywords the hints read (precision, gradient
 * checkpointing, the optimizer by name).
 */
import type { Node } from 'web-tree-sitter';
import { guardOf } from './python';

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
