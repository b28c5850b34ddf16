/**
 * Whether the training code switches on activation recompute (gradient
 * checkpointing), read (never run) from the model's file and then the Python
 * files beside it, so the plan prices what the user runs:
 * - transformers' `model.gradient_checkpointing_enable()`;
 * - `gradient_checkpointing=True` given to a call (TrainingArguments and its
 *   kin: Seq2SeqTrainingArguments, trl's SFTConfig);
 * - peft's `prepare_model_for_kbit_training(model)`, which switches it on
 *   unless `use_gradient_checkpointing=False` (QLoRA scripts rely on that).
 * Each recomputes every decoder layer's forward during the backward: full
 * recompute. A call behind an `if` (a flag) is the user's choice per run and
 * gives no hint; neither does a value WAP cannot read.
 */
import type { Node } from 'web-tree-sitter';
import type { RecomputeMode } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { firstCallHint } from './firstHint';
import { callArgs } from './python';

export interface RecomputeHint {
  recompute: RecomputeMode;
  /** 'train.py:12 (model.gradient_checkpointing_enable())'. */
  source: string;
}

const WORDS = /gradient_checkpointing|prepare_model_for_kbit_training/;

/** Whether a call switches recompute on: true, false (it says off), or undefined (it says nothing WAP can read). */
function switchesOn(call: Node): boolean | undefined {
  const fn = call.childForFieldName('function')?.text.replace(/\s+/g, '') ?? '';
  const args = callArgs(call);
  if (/(^|\.)gradient_checkpointing_enable$/.test(fn)) return true;
  if (/(^|\.)prepare_model_for_kbit_training$/.test(fn)) {
    const flag = args?.keywords.get('use_gradient_checkpointing')?.text;
    return flag === undefined ? true : flag === 'True' ? true : flag === 'False' ? false : undefined;
  }
  const flag = args?.keywords.get('gradient_checkpointing')?.text;
  return flag === 'True' ? true : undefined;
}


/** The recompute the Python files switch on: the model's own file first, then the others. */
export function recomputeHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): RecomputeHint | undefined {
  return firstCallHint(files, modelFile, WORDS, (call, name) =>
    switchesOn(call) === true ? { recompute: 'full', source: `${name}:${call.startPosition.row + 1} (${call.text.replace(/\s+/g, ' ').slice(0, 80)})` } : undefined);
}

/** The options with the code's recompute pinned, unless a flag or setting chose (`--recompute`, even `auto`). */
export function withRecomputeFrom(options: PlanOptions, hint: RecomputeHint | undefined): PlanOptions {
  if (!hint || options.recomputeSource || options.pins?.recompute) return options;
  return { ...options, pins: { ...options.pins, recompute: hint.recompute }, recomputeSource: hint.source, recomputeFromCode: true };
}
