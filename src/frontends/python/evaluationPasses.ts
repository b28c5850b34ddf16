/**
 * Evaluation inside a training loop, which WAP skips. nanoGPT's loop opens with `losses = estimate_loss()`, an
 * `@torch.no_grad()` function that runs 2 × 200 forwards. Read in full, it spends the loop's whole budget
 * (loops.ts SCRIPT_PART_STEPS) before the training step below it, so the autocast that step runs under was
 * never seen.
 *
 * Code under `torch.no_grad()` or `torch.inference_mode()` builds no autograd graph, so it is not the step being
 * planned. Inside a script loop, WAP skips such a function or `with` block. Its result is unknown, with that reason,
 * as is whatever the block assigns.
 *
 * Outside a script loop nothing is skipped: a module-level check call `with torch.no_grad(): model(x)` is how a
 * script states its input.
 */
import { rangeOf, type PyNode } from './ast';
import type { Interp } from './interpreter';
import { fileLabel } from './runFacts';
import { forgetUnreadEffects } from './unreadCode';
import type { FuncV, Scope, Value } from './values';

/** torch's grad-disabling contexts and decorators (torch.no_grad, torch.inference_mode; torch.autograd re-exports both). */
const GRAD_OFF = /^(torch\.(autograd\.)?)?(no_grad|inference_mode)$/;

/** A decorator's or context's dotted name, without its call: `torch.no_grad()` → `torch.no_grad`. */
const calleeName = (text: string): string => text.replace(/^@\s*/, '').replace(/\(.*$/s, '').trim();

/** Whether a decorator (`@torch.no_grad()`) or a `with` context (`torch.inference_mode()`) turns gradients off. */
export const turnsGradientsOff = (text: string): boolean => GRAD_OFF.test(calleeName(text));

function where(node: PyNode): string {
  const at = rangeOf(node);
  return `${at.file ? `${fileLabel(at.file)}:` : 'line '}${at.line}`;
}

/**
 * The value to return instead of calling `fn`, a function decorated to run without gradients, when a script
 * loop calls it. Returns undefined when `fn` is not such a function or no script loop is running: the call runs
 * as usual.
 */
export function skippedEvaluationCall(interp: Interp, fn: FuncV): Value | undefined {
  if (!fn.withoutGradients || interp.scriptLoops === 0) return undefined;
  const why = `${fn.name}() (${where(fn.node)}) runs under ${fn.withoutGradients}: an evaluation pass, not the training step, which WAP skips inside the training loop`;
  interp.warn(fn.node, `${why}; its result is unknown`, 'evaluation-skipped', 'info');
  return { k: 'unknown', why };
}

/**
 * Whether a `with` block whose contexts are `contexts` is skipped: inside a script loop, a block under
 * `torch.no_grad()` is an evaluation pass (build-nanogpt's validation loss, a sampling loop). What it
 * assigns becomes unknown.
 */
export function skipsEvaluationBlock(interp: Interp, node: PyNode, contexts: PyNode[], body: PyNode, scope: Scope): boolean {
  if (interp.scriptLoops === 0) return false;
  const gradOff = contexts.find((c) => turnsGradientsOff(interp.text(c)));
  if (!gradOff) return false;
  const why = `the \`with ${interp.text(gradOff)}:\` block at ${where(node)} is an evaluation pass, which WAP skips inside the training loop`;
  interp.warn(gradOff, why, 'evaluation-skipped', 'info');
  forgetUnreadEffects(interp, [body], why, scope);
  return true;
}
