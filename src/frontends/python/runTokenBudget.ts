/**
 * A global batch a script states as a budget and divides into accumulation steps itself. build-nanogpt sets
 * `total_batch_size = 524288` tokens and computes `grad_accum_steps = total_batch_size // (B * T * ddp_world_size)`;
 * llm.c does the same through `tokens_per_fwdbwd`, and Megatron-style scripts divide a `global_batch_size` in samples
 * by `micro_batch_size * world_size`. Whatever the GPU count, a step then trains on the budget: in samples, the
 * budget over the tokens per sample when one factor is the sequence. The accumulation itself is unknown until the
 * processes are counted, which is why the product the other scripts state (runBatch.ts) cannot be read here.
 */
import { MICRO_BATCH_NAMES, PROCESS_COUNT } from '../../core/batchOptions';
import { SEQUENCE_LENGTH_NAMES } from '../../core/sequenceOptions';
import { field, rangeOf, type PyNode } from './ast';
import { short } from './branches';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import { binaryOperator, divisorFactors } from './productFactors';
import { fileLabel } from './runFacts';
import { positiveWhole, type Scope } from './values';

/**
 * The name a factor goes by: `T`, or the attribute of `args.sequence_length`. B and T are the batch and time
 * dimensions of a (B, T, C) activation in nanoGPT, build-nanogpt and llm.c, so the single letters count too.
 */
function nameOf(interp: Interp, node: PyNode): string {
  return interp.text(node.type === 'attribute' ? (field(node, 'attribute') ?? node) : node);
}
const isSequence = (name: string): boolean => name === 'T' || SEQUENCE_LENGTH_NAMES.has(name);
const isMicroBatch = (name: string): boolean => name === 'B' || MICRO_BATCH_NAMES.includes(name);

/**
 * `accumulation = budget // (micro × [sequence ×] processes)`, before it runs: the budget in samples becomes the run's
 * batch (RunFacts.budget). A divisor with a factor WAP cannot name, or numbers it cannot read, states none.
 */
export function noteTokenBudget(interp: Interp, node: PyNode, accumulation: string, scope: Scope): void {
  const right = field(node, 'right');
  if (interp.run.budget || !right || binaryOperator(interp, right) !== '//') return;
  const dividend = field(right, 'left');
  const divisor = field(right, 'right');
  if (!dividend || !divisor) return;
  const factors = divisorFactors(interp, divisor, node);
  const processes = factors.filter((f) => PROCESS_COUNT.test(interp.text(f)));
  const micro = factors.filter((f) => isMicroBatch(nameOf(interp, f)));
  const sequence = factors.filter((f) => isSequence(nameOf(interp, f)));
  if (processes.length !== 1 || micro.length !== 1 || sequence.length > 1 || factors.length !== 2 + sequence.length) return;
  const total = positiveWhole(evalExpr(interp, dividend, scope));
  const tokens = sequence.length === 1 ? positiveWhole(evalExpr(interp, sequence[0], scope)) : 1;
  if (total === undefined || tokens === undefined || total % tokens !== 0) return;
  const file = fileLabel(interp.file);
  const budget = sequence.length === 1 ? `${interp.text(dividend)} ${total} tokens ÷ ${interp.text(sequence[0])} ${tokens} per sample` : `${interp.text(dividend)} ${total}`;
  const perSample = sequence.length === 1 ? { tokens, source: `${interp.text(sequence[0])} ${tokens} in ${file}, the tokens per sample of its batch budget` } : undefined;
  // A divisor named through earlier assignments says what it stands for: nanochat's `world_tokens_per_fwdbwd`.
  const product = factors.map((f) => interp.text(f)).join(' * ');
  const expanded = factors.some((f) => f.start < divisor.start || f.end > divisor.end);
  const named = expanded ? ` (${interp.text(divisor)} = ${product})` : '';
  interp.run.budget = { samples: total / tokens, source: `${file}: ${budget}, ${accumulation} = \`${short(interp.text(right))}\`${named} at line ${rangeOf(node).line} splits it over the processes`, ...(perSample ? { sequence: perSample } : {}) };
}
