/**
 * Hugging Face Trainer's configuration as training scripts write it:
 * `TrainingArguments(...)` and the trl configs built on it (SFTConfig,
 * DPOConfig, …), whose keywords the hints read (precision, gradient
 * checkpointing, the optimizer by name).
 */
import type { Node } from 'web-tree-sitter';
import { guardOf } from './python';

const TRAINING_ARGUMENTS = /(^|\.)((Seq2Seq)?TrainingArguments|(SFT|DPO|ORPO|KTO|CPO|GRPO|PPO|Reward)Config)$/;

/** Whether a call builds Trainer arguments and always runs (not behind a flag). */
export function isTrainingArguments(call: Node): boolean {
  const fn = call.childForFieldName('function');
  return !!fn && TRAINING_ARGUMENTS.test(fn.text.replace(/\s+/g, '')) && !guardOf(call);
}
