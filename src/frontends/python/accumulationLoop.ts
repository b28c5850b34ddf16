/**
 * The micro-step loop of a training step, `for micro_step in range(grad_accum_steps):`, whose count WAP cannot know
 * where the script divides its accumulation by the processes (nanoGPT's `//= ddp_world_size`, build-nanogpt's token
 * budget over `B * T * ddp_world_size`). Skipped, the training step inside is lost with what it says about the run:
 * the autocast it trains under, the forward it calls. A count of accumulation steps is at least one, and every
 * micro-step runs the same code, so the body is read once.
 */
import { ACCUMULATION_NAMES } from '../../core/batchOptions';
import { field, namedChildren, type PyNode } from './ast';
import type { Interp } from './interpreter';
import { int, type Value } from './values';

/** `range(<accumulation>)`: the name (or attribute, `args.grad_accum_steps`) it counts, else undefined. */
function accumulationCounted(interp: Interp, iterable: PyNode): string | undefined {
  if (iterable.type !== 'call' || interp.text(field(iterable, 'function') ?? iterable) !== 'range') return undefined;
  const args = namedChildren(field(iterable, 'arguments') ?? iterable);
  if (args.length !== 1) return undefined;
  const counted = args[0];
  const name = counted.type === 'attribute' ? field(counted, 'attribute') : counted.type === 'identifier' ? counted : undefined;
  return name && ACCUMULATION_NAMES.includes(interp.text(name)) ? interp.text(counted) : undefined;
}

/** The items to read an unknown accumulation loop with (one micro-step), said once; undefined for any other loop. */
export function oneMicroStep(interp: Interp, iterable: PyNode): Value[] | undefined {
  const counted = accumulationCounted(interp, iterable);
  if (!counted) return undefined;
  interp.warn(iterable, `\`${counted}\` is unknown here (the script divides it by its processes): WAP reads one micro-step of the loop, as every micro-step runs the same code`, 'accumulation-loop', 'info');
  return [int(0)];
}
