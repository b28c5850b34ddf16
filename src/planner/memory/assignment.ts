/**
 * Memory per GPU of a chosen assignment (one option per layer) as the report's
 * breakdown: the options' model states and activations summed, plus the
 * workspace a setup needs at its peak: the CUDA context, ZeRO-3's gathered
 * parameters or those parameter offload fetches (the unit in use and the
 * prefetched one, as FSDP does), and the
 * activations a recompute brings back (the largest block under full
 * recompute, the largest attention core under selective).
 */
import type { MemoryBreakdown } from '../../protocol/plan';
import type { CostTables } from '../cost/tables';
import { CONTEXT_BYTES } from './index';
import { breakdown } from './model';

export function assignmentBreakdown(t: CostTables, choice: ArrayLike<number>, layers?: readonly number[]): MemoryBreakdown {
  const parts = { weights: 0, gradients: 0, optimizer: 0, activations: 0, workspace: CONTEXT_BYTES };
  let gatherA = 0;
  let gatherB = 0;
  const bySegment = new Map<number, number>();
  let recomputePeak = 0;
  const visit = (i: number): void => {
    const o = t.options[i][choice[i]];
    parts.weights += o.memory.weights;
    parts.gradients += o.memory.gradients;
    parts.optimizer += o.memory.optimizer;
    parts.activations += o.memory.activations;
    if (o.gatherBytes > 0) {
      // Gathered (or, offloaded, fetched) 16-bit parameters minus the shard already held.
      const extra = o.gatherBytes - o.memory.weights;
      if (extra > gatherA) [gatherA, gatherB] = [extra, gatherA];
      else if (extra > gatherB) gatherB = extra;
    }
    if (o.recomputedBytes > 0) {
      const seg = t.setup.recompute === 'full' && t.recompute ? t.recompute.segmentOf[i] : -1;
      if (seg >= 0) bySegment.set(seg, (bySegment.get(seg) ?? 0) + o.recomputedBytes);
      else recomputePeak = Math.max(recomputePeak, o.recomputedBytes);
    }
  };
  if (layers) for (const i of layers) visit(i);
  else for (let i = 0; i < t.layers.length; i++) visit(i);
  for (const b of bySegment.values()) recomputePeak = Math.max(recomputePeak, b);
  parts.workspace += gatherA + gatherB + recomputePeak;
  return breakdown(parts);
}

/** Host memory per GPU the chosen assignment's offload fills (0 without offload). */
export function assignmentHostBytes(t: CostTables, choice: ArrayLike<number>, layers?: readonly number[]): number {
  let bytes = 0;
  const visit = (i: number): void => {
    bytes += t.options[i][choice[i]].hostBytes;
  };
  if (layers) for (const i of layers) visit(i);
  else for (let i = 0; i < t.layers.length; i++) visit(i);
  return bytes;
}
